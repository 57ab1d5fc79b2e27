package mockmodel

import "fmt"

// The wire protocols of the mock servers, as agents.Offline.API names them.
const (
	APIAnthropic = "anthropic" // NewAnthropic: Claude Code
	APIResponses = "responses" // NewResponses: Codex
	APIGemini    = "gemini"    // NewGemini: Gemini CLI
	APIChat      = "chat"      // NewChat: OpenAI chat completions
)

// Server is one running mock server of any protocol.
type Server struct {
	*Log
	// URL is the server's base URL, e.g. http://127.0.0.1:PORT.
	URL string
	// Close stops the server.
	Close func()
}

// Start starts the mock server of api (one of the API constants) on a
// random local port.
func Start(api string, opts Options) (Server, error) {
	switch api {
	case APIAnthropic:
		m := NewAnthropic(opts)
		return Server{m.Log, m.URL, m.Close}, nil
	case APIResponses:
		m := NewResponses(opts)
		return Server{m.Log, m.URL, m.Close}, nil
	case APIGemini:
		m := NewGemini(opts)
		return Server{m.Log, m.URL, m.Close}, nil
	case APIChat:
		m := NewChat(opts)
		return Server{m.Log, m.URL, m.Close}, nil
	}
	return Server{}, fmt.Errorf("mock model: unknown API %q", api)
}
