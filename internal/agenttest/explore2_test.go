package agenttest_test

import "os/exec"

func exec_find(dir string) (string, error) {
	b, err := exec.Command("sh", "-c", "find "+dir+" -type f | head -50; for f in $(find "+dir+" -name '*.jsonl' | head -3); do echo == $f; cat $f | head -c 6000; done").CombinedOutput()
	return string(b), err
}
