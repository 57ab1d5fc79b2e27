package agenttest_test

import (
	"os"
	"testing"
	"time"

	"github.com/relayhq/relay/internal/agenttest"
	"github.com/relayhq/relay/internal/mockmodel"
)

func TestExplore(t *testing.T) {
	name := os.Getenv("EXPLORE")
	if name == "" {
		t.Skip()
	}
	m := mockmodel.NewChat(mockmodel.Options{Script: mockmodel.Queue(
		mockmodel.Reply{Text: "Sure.\n\n@relay:Bob hello from the model, a long line that goes on and on and on past the wrap of the terminal window for sure\n\n```\n@relay:Bob fenced\n```\n\n\\@relay:Bob escaped"})})
	defer m.Close()
	c := agenttest.OfflineCLI(t, name, agenttest.OfflineOptions{Model: m.URL})
	tm := agenttest.Start(t, c)
	time.Sleep(70 * time.Second)
	s, _ := agenttest.RenderScreen(tm.Output(), 100, 30)
	t.Logf("SCREEN1:\n%s", s)
	tm.Paste("say hi")
	time.Sleep(300 * time.Millisecond)
	tm.Enter()
	time.Sleep(25 * time.Second)
	s, _ = agenttest.RenderScreen(tm.Output(), 100, 30)
	t.Logf("SCREEN2:\n%s", s)
	for _, r := range m.All() {
		t.Logf("req %d kind %s path %s last %q tools %v", r.Seq, r.Kind, r.Path, r.LastUser, r.Tools)
	}
	_ = tm.WriteRaw("/tmp/explore-" + name + ".raw")
	out, _ := exec_find(c.ConfigDir)
	t.Logf("files:\n%s", out)
}
