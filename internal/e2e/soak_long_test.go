//go:build soak

package e2e

// soakPerSide is how many messages each agent sends the other in TestSoak:
// 1,000 in all with the build tag soak (make soak).
const soakPerSide = 500
