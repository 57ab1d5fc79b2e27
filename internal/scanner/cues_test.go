package scanner

// CuesFor returns, for the scanner's own tests, the cues of a profile as
// the packages under agents/ define them (generic, claude, codex, gemini…;
// "" is a TUI that wraps its own text, with no cues). The internal tests
// cannot import agents/, which imports this package: profiles_test.go, in
// the external test package, sets profileCues before any test runs.
func CuesFor(profile string) (Cues, bool) {
	if profile == "" {
		return Cues{}, true
	}
	if profileCues == nil {
		panic("scanner: profileCues not set (profiles_test.go)")
	}
	return profileCues(profile)
}

// profileCues finds a profile's cues in internal/agents/registry; see CuesFor.
var profileCues func(profile string) (Cues, bool)

// SetProfileCues is how the external test package hands over profileCues.
func SetProfileCues(f func(profile string) (Cues, bool)) { profileCues = f }
