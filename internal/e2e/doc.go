// Package e2e holds end-to-end tests that run the real relay binary in real
// pseudo-terminals, the way a human runs it. It has no code of its own
// beyond test helpers.
package e2e
