package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/relayhq/relay/internal/dashboard"
	"github.com/relayhq/relay/internal/hub"
)

// A tool follows a workspace through the dashboard's websocket, with the
// hub's token as a bearer header.
func ExampleNew() {
	home, _ := os.MkdirTemp("", "relay-example")
	defer os.RemoveAll(home)
	h, err := hub.Start(context.Background(), hub.Options{Home: home, Listen: "127.0.0.1:0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Shutdown()

	d, err := dashboard.New(dashboard.Options{URL: h.URL(), Token: h.Token()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	fmt.Println(strings.HasPrefix(d.URL(), "http://127.0.0.1:"))

	ws := "ws" + strings.TrimPrefix(d.URL(), "http") + "ws?workspace=default"
	conn, _, err := websocket.DefaultDialer.Dial(ws, http.Header{"Authorization": {"Bearer " + h.Token()}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	var hello dashboard.Frame
	if err := conn.ReadJSON(&hello); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(hello.Type, hello.Workspace, hello.Snapshot)
	// Output:
	// true
	// hello default true
}
