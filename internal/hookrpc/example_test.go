package hookrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/relayhq/relay/internal/hookrpc"
)

// The wrapper listens and answers; `relay hook Stop` calls with the hook's
// stdin and prints what it gets back.
func Example() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	s, err := hookrpc.Listen(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- s.Serve(ctx, func(ctx context.Context, req hookrpc.Request) hookrpc.Response {
			var p struct {
				Last string `json:"last_assistant_message"`
			}
			json.Unmarshal(req.Payload, &p)
			fmt.Printf("wrapper: %s after %q\n", req.Event, p.Last)
			return hookrpc.Response{
				Stdout: `{"decision":"block","reason":"[relay] Message from Alice: run the tests"}`,
				Sent:   func(err error) { fmt.Println("wrapper: delivered:", err == nil) },
			}
		})
	}()

	// In `relay hook Stop`, with the path from RELAY_HOOK_SOCKET:
	hctx, hcancel := context.WithTimeout(context.Background(), hookrpc.Limit("Stop"))
	defer hcancel()
	resp, err := hookrpc.Call(hctx, s.Path(), hookrpc.Request{
		Event:   "Stop",
		Payload: json.RawMessage(`{"hook_event_name":"Stop","last_assistant_message":"Done."}`),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	cancel()
	<-done
	fmt.Println("relay hook prints:", resp.Stdout)
	// Output:
	// wrapper: Stop after "Done."
	// wrapper: delivered: true
	// relay hook prints: {"decision":"block","reason":"[relay] Message from Alice: run the tests"}
}
