package cli

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestDoctorReadOnlyFileSystem: a state folder on a read-only file system
// is reported as such; changing its owner (chown) would not help. Another
// failure to write still suggests chown.
func TestDoctorReadOnlyFileSystem(t *testing.T) {
	for _, c := range []struct {
		name      string
		err       error
		want      string
		wantChown bool
	}{
		{"read-only", &os.PathError{Op: "open", Path: "/x/.doctor-1", Err: syscall.EROFS}, "on a read-only file system", false},
		{"denied", &os.PathError{Op: "open", Path: "/x/.doctor-1", Err: syscall.EACCES}, "is not writable", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			detail, fix := notWritable("/x", c.err)
			if !strings.Contains(detail, c.want) || strings.Contains(fix, "chown") != c.wantChown {
				t.Errorf("detail %q, fix %q; want %q, chown suggested %v", detail, fix, c.want, c.wantChown)
			}
		})
	}
	t.Run("mounted read-only", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to mount a read-only file system; not root here")
		}
		home := t.TempDir()
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,mode=0700,size=64k", "tmpfs", home).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a read-only tmpfs: %v %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("umount", home).Run() })
		env, out, _ := doctorEnv(t.TempDir(), map[string]string{"RELAY_HOME": home})
		Main([]string{"doctor"}, env)
		report := out.String()
		if !strings.Contains(report, "FAIL  state folder") || !strings.Contains(report, home+" is on a read-only file system") {
			t.Errorf("doctor's report does not say the file system is read-only:\n%s", report)
		}
		if line := stateFolderLines(report); strings.Contains(line, "chown") {
			t.Errorf("doctor suggests chown for a read-only file system:\n%s", line)
		}
	})
}

// stateFolderLines returns the state folder check of a doctor report and
// its fix line.
func stateFolderLines(report string) string {
	var out []string
	in := false
	for _, l := range strings.Split(report, "\n") {
		if strings.Contains(l, "state folder") {
			in = true
		} else if in && !strings.HasPrefix(strings.TrimSpace(l), "fix:") {
			break
		}
		if in {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
