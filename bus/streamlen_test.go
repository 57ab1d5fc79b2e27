//go:build !soak

package bus_test

// streamLength is the long stream's length in make test; make soak sends
// 20,000 (streamlen_soak_test.go).
const streamLength = 1000
