package procfs

import (
	"errors"
	"testing"
)

// TestErrUnsupportedWrapsStd: callers that know only the standard library's
// errors.ErrUnsupported recognise the error and fall back.
func TestErrUnsupportedWrapsStd(t *testing.T) {
	if !errors.Is(ErrUnsupported, errors.ErrUnsupported) {
		t.Errorf("ErrUnsupported = %v, does not wrap errors.ErrUnsupported", ErrUnsupported)
	}
}
