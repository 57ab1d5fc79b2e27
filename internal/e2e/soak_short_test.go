//go:build !soak

package e2e

// soakPerSide is how many messages each agent sends the other in TestSoak:
// a short run for make test (`make soak` runs the long one).
const soakPerSide = 25
