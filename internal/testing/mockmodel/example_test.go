package mockmodel_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/relayhq/relay/internal/testing/mockmodel"
)

// A test starts a mock, points the CLI at m.URL, and asserts on what
// reached the model.
func ExampleAnthropic() {
	m := mockmodel.NewAnthropic(mockmodel.Options{Script: mockmodel.Queue(
		mockmodel.Reply{Text: "@relay:Bob Please rebase onto main."},
	)})
	defer m.Close()

	// Here Claude Code would run with ANTHROPIC_BASE_URL=m.URL; a plain
	// request stands in for it.
	body := `{"stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"ask Bob"}]}`
	resp, err := http.Post(m.URL+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := m.WaitForRequest(ctx, "ask Bob")
	fmt.Println(r.Turn, r.LastUser, err, m.Count("ask Bob"))
	// Output: 1 ask Bob <nil> 1
}
