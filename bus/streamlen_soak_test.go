//go:build soak

package bus_test

// streamLength is the long stream's length in make soak.
const streamLength = 20000
