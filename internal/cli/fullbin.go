package cli

// FullBinary is the file name of the full relay binary (the default build),
// which `make install` puts beside the lean one (the lean build tag, named
// relay): the lean relay runs it for the commands it lacks (full_lean.go).
const FullBinary = "relay-hub"
