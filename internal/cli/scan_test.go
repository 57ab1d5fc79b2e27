package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// runCLI runs relay with args, in-memory streams and an empty environment.
func runCLI(stdin string, args ...string) (code int, stdout, stderr string) {
	return runCLIEnv(nil, stdin, args...)
}

func runCLIEnv(vars map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }, Environ: []string{}}
	code = Main(args, env)
	return code, out.String(), errb.String()
}

// TestScanGolden runs relay scan over every recording and compares its
// output with testdata/scan/FOLDER/NAME.jsonl (rewrite with -update). A new
// recording without a golden file is skipped with a note; the scanner's own
// tests check its must and must_not commands.
func TestScanGolden(t *testing.T) {
	raws, _ := filepath.Glob("../../testdata/recordings/*/*.raw")
	if len(raws) == 0 {
		t.Fatal("no recordings under testdata/recordings")
	}
	for _, raw := range raws {
		folder := filepath.Base(filepath.Dir(raw))
		name := strings.TrimSuffix(filepath.Base(raw), ".raw")
		t.Run(folder+"/"+name, func(t *testing.T) {
			// No --profile: the profile is guessed from the stream.
			args := []string{"scan"}
			var fx struct{ Must []struct{ NS string } }
			if data, err := os.ReadFile(strings.TrimSuffix(raw, ".raw") + ".json"); err == nil {
				_ = json.Unmarshal(data, &fx)
			}
			seen := map[string]bool{"relay": true, "broadcast": true, "memory": true}
			for _, m := range fx.Must {
				if !seen[m.NS] {
					seen[m.NS] = true
					args = append(args, "--ns", m.NS)
				}
			}
			code, stdout, stderr := runCLI("", append(args, raw)...)
			if code != 0 {
				t.Fatalf("relay %v: exit %d: %s", args, code, stderr)
			}
			path := filepath.Join("testdata", "scan", folder, name+".jsonl")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if os.IsNotExist(err) {
				t.Skipf("no golden file %s yet: run go test ./internal/cli -run TestScanGolden -update", path)
			}
			if err != nil {
				t.Fatal(err)
			}
			if stdout != string(want) {
				t.Errorf("relay %s differs from %s:\n--- got\n%s--- want\n%s", strings.Join(args, " "), path, stdout, want)
			}
		})
	}
}

func TestScanStdinAndAsciicast(t *testing.T) {
	cast := `{"version": 2, "width": 40, "height": 6}
[0.5, "o", "● @relay:Bob run the\r\n  tests please\r\n\r\n"]
[0.6, "r", "60x10"]
[2.0, "o", "@broadcast: done\r\n\r\n"]
`
	code, stdout, stderr := runCLI(cast, "scan", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Bob is final once quiet, which the clock shows at the next event
	// (2.0 s); the resize kept the screen's rows; broadcast is final at the
	// end of the recording.
	want := `{"ns":"relay","target":"Bob","body":"run the tests please","row":0,"time":2}
{"ns":"broadcast","target":"","body":"done","row":3,"time":2}
`
	if stdout != want {
		t.Errorf("got\n%swant\n%s", stdout, want)
	}
}

func TestScanSizeFromName(t *testing.T) {
	// 20 columns: the command wraps softly at the edge and is read whole.
	dir := t.TempDir()
	file := filepath.Join(dir, "narrow-20x5.raw")
	if err := os.WriteFile(file, []byte("@relay:Bob abcdefghijklmnopq\r\n\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI("", "scan", file)
	if code != 0 || !strings.Contains(stdout, `"body":"abcdefghijklmnopq"`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// --cols wins over the name: at 80 columns nothing wraps either.
	if code, stdout, _ := runCLI("", "scan", "--cols", "80", "--rows", "24", file); code != 0 || !strings.Contains(stdout, "abcdefghijklmnopq") {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
}

func TestScanConfiguredNamespace(t *testing.T) {
	// A [patterns.deploy] in the user's configuration registers @deploy,
	// as in a wrapped agent; without it, @deploy does not fire.
	dir := t.TempDir()
	file := filepath.Join(dir, "deploy-60x10.raw")
	if err := os.WriteFile(file, []byte("@deploy:staging v1.2.3\r\n\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stdout, _ := runCLIEnv(map[string]string{"XDG_CONFIG_HOME": dir}, "", "scan", file); stdout != "" {
		t.Fatalf("unregistered @deploy fired: %s", stdout)
	}
	if err := os.MkdirAll(filepath.Join(dir, "relay"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := "[patterns.deploy]\ncommand = [\"true\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "relay", "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLIEnv(map[string]string{"XDG_CONFIG_HOME": dir}, "", "scan", file)
	if code != 0 || stdout != `{"ns":"deploy","target":"staging","body":"v1.2.3","row":0}`+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// A broken configuration is a usage error that names the file.
	if err := os.WriteFile(filepath.Join(dir, "relay", "config.toml"), []byte("[patterns.deploy]\nnope = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLIEnv(map[string]string{"XDG_CONFIG_HOME": dir}, "", "scan", file); code != 2 || !strings.Contains(stderr, "config.toml") {
		t.Fatalf("broken config: exit %d, stderr %q", code, stderr)
	}
}

func TestScanErrors(t *testing.T) {
	dir := t.TempDir()
	badCast := filepath.Join(dir, "bad.cast")
	if err := os.WriteFile(badCast, []byte("{\"version\": 2, \"width\": 80, \"height\": 24}\n[0.1, \"o\", \"ok\"]\n[oops]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no file", []string{"scan"}, 2, "one FILE"},
		{"two files", []string{"scan", "a", "b"}, 2, "one FILE"},
		{"bad flag", []string{"scan", "--nope", "x"}, 2, "flag provided but not defined"},
		{"bad cols", []string{"scan", "--cols", "-3", "x"}, 2, "--cols -3"},
		{"bad namespace", []string{"scan", "--ns", "no way", "x"}, 2, `namespace "no way"`},
		{"bad profile", []string{"scan", "--profile", "vim", "x"}, 2, `--profile "vim"`},
		{"missing file", []string{"scan", filepath.Join(dir, "missing.raw")}, 1, "missing.raw: no such file"},
		{"broken asciicast", []string{"scan", badCast}, 1, "bad.cast: line 3: want an event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI("", tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.want)
			}
		})
	}
}
