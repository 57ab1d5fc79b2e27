package cli

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/relayhq/relay/config"
	"github.com/relayhq/relay/memory"
)

// checkMemoryStore checks [memory]: a backend this relay serves, and the
// embedder (reachable, the model present, the dimensions configured). No
// line without [memory.embedder] and with the default backend.
func checkMemoryStore(ctx context.Context, env *Env, mc config.Memory) []doctorCheck {
	var out []doctorCheck
	if mc.Backend == config.BackendQdrant {
		out = append(out, doctorCheck{Name: "memory store", Detail: `backend = "qdrant": this relay has no Qdrant client yet; the hub will not start`,
			Fix: `set [memory] backend = "sqlite" (docs/memory.md)`})
	}
	e := mc.Embedder
	if e.Provider == "" {
		return out
	}
	c := doctorCheck{Name: "embedder"}
	ec := embedderConfig(e, env.getenv)
	if ec.URL == "" {
		ec.URL = "http://127.0.0.1:11434"
	}
	what := fmt.Sprintf("%s %s at %s", e.Provider, e.Model, ec.URL)
	if e.APIKeyEnv != "" && ec.APIKey == "" {
		c.Detail = fmt.Sprintf("%s: $%s (api_key_env) is empty", what, e.APIKeyEnv)
		c.Fix = fmt.Sprintf("export %s=… in the environment the hub (relay up) starts from", e.APIKeyEnv)
		return append(out, c)
	}
	cctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	r, err := memory.CheckEmbedder(cctx, ec)
	if err != nil {
		c.Detail = fmt.Sprintf("%s: %v", what, err)
		var got []string
		switch {
		case strings.Contains(err.Error(), "not reachable"):
			c.Fix = "start it"
			if e.Provider == "ollama" {
				c.Fix = "start it (`ollama serve`)"
			}
			c.Fix += ", or correct [memory.embedder] url; until then memories wait for their vectors and search is lexical"
		case strings.Contains(err.Error(), "has no model"):
			c.Fix = "pull the model, or name one the service has in [memory.embedder] model"
			if e.Provider == "ollama" {
				c.Fix = fmt.Sprintf("`ollama pull %s`, or name one the service has in [memory.embedder] model", e.Model)
			}
		case func() bool { got = dimsRE.FindStringSubmatch(err.Error()); return got != nil }():
			c.Fix = fmt.Sprintf("set [memory.embedder] dimensions = %s, or use a model that gives %d", got[1], e.Dimensions)
		case errors.Is(err, memory.ErrEmbedder):
			c.Fix = "check [memory.embedder] provider, url and model against the service"
		}
		return append(out, c)
	}
	c.OK = true
	c.Detail = fmt.Sprintf("%s: %d dimensions, %s for one text", what, r.Dimensions, r.Took.Round(time.Millisecond))
	return append(out, c)
}

var dimsRE = regexp.MustCompile(`gives (\d+) dimensions; the config says`)
