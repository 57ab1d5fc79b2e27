//go:build !lean

package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrapperBinary(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	alone := filepath.Join(t.TempDir(), FullBinary)
	if err := os.WriteFile(alone, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	hubBin, lean := write(FullBinary, 0o755), write("relay", 0o755)
	other := write("relay-custom", 0o755)
	tests := []struct {
		name, exe, want string
	}{
		{"relay-hub with the lean relay beside it", hubBin, lean},
		{"relay-hub alone", alone, alone},
		{"any other relay", other, other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := wrapperBinary(tt.exe); got != tt.want {
				t.Errorf("wrapperBinary(%s) = %s, want %s", tt.exe, got, tt.want)
			}
		})
	}
}
