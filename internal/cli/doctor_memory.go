//go:build !lean

package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/relayhq/relay/internal/lazyre"
	"strings"
	"time"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/memory"
)

// checkMemoryStore checks [memory]: the embedder (reachable, the model
// present, the dimensions configured) and, with backend = "qdrant", the
// Qdrant server. No line without [memory.embedder] and with the default
// backend.
func checkMemoryStore(ctx context.Context, env *Env, mc config.Memory) []doctorCheck {
	var out []doctorCheck
	dims := 0
	if mc.Embedder.Provider != "" {
		var c doctorCheck
		c, dims = checkEmbedder(ctx, env, mc.Embedder)
		out = append(out, c)
	}
	if mc.Backend == config.BackendQdrant {
		out = append(out, checkQdrant(ctx, env, mc, dims))
	}
	return out
}

// checkEmbedder checks [memory.embedder] and returns the dimensions of
// its vectors (the configured ones when it fails; 0 when unknown).
func checkEmbedder(ctx context.Context, env *Env, e config.Embedder) (doctorCheck, int) {
	c := doctorCheck{Name: "embedder"}
	ec := embedderConfig(e, env.getenv)
	if ec.URL == "" {
		ec.URL = "http://127.0.0.1:11434"
	}
	what := fmt.Sprintf("%s %s at %s", e.Provider, e.Model, ec.URL)
	if e.APIKeyEnv != "" && ec.APIKey == "" {
		c.Detail = fmt.Sprintf("%s: $%s (api_key_env) is empty", what, e.APIKeyEnv)
		c.Fix = fmt.Sprintf("export %s=… in the environment the hub (relay up) starts from", e.APIKeyEnv)
		return c, e.Dimensions
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
		case func() bool { got = dimsRE().FindStringSubmatch(err.Error()); return got != nil }():
			c.Fix = fmt.Sprintf("set [memory.embedder] dimensions = %s, or use a model that gives %d", got[1], e.Dimensions)
		case errors.Is(err, memory.ErrEmbedder):
			c.Fix = "check [memory.embedder] provider, url and model against the service"
		}
		return c, e.Dimensions
	}
	c.OK = true
	c.Detail = fmt.Sprintf("%s: %d dimensions, %s for one text", what, r.Dimensions, r.Took.Round(time.Millisecond))
	return c, r.Dimensions
}

var dimsRE = lazyre.New(`gives (\d+) dimensions; the config says`)

// checkQdrant checks the Qdrant server of backend = "qdrant": that it
// answers at [memory.qdrant] url, and that the collection, when it
// exists, holds vectors of the embedder's dims.
func checkQdrant(ctx context.Context, env *Env, mc config.Memory, dims int) doctorCheck {
	qc := qdrantConfig(mc.Qdrant, env.getenv)
	c := doctorCheck{Name: "memory store"}
	what := fmt.Sprintf("qdrant at %s, collection %s", qc.URL, qc.Collection)
	if mc.Qdrant.APIKeyEnv != "" && qc.APIKey == "" {
		c.Detail = fmt.Sprintf("%s: $%s (api_key_env) is empty", what, mc.Qdrant.APIKeyEnv)
		c.Fix = fmt.Sprintf("export %s=… in the environment the hub (relay up) starts from", mc.Qdrant.APIKeyEnv)
		return c
	}
	cctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	r, err := memory.CheckQdrant(cctx, qc, dims)
	switch {
	case err != nil:
		c.Detail = fmt.Sprintf("collection %s: %v", qc.Collection, err) // the error names the URL
		switch {
		case strings.Contains(err.Error(), "not reachable"), strings.Contains(err.Error(), "does not answer as a Qdrant"):
			c.Fix = "start Qdrant, or correct [memory.qdrant] url; until then memories are kept in RELAY_HOME/memory.db (found by words) and sent when it answers"
		case strings.Contains(err.Error(), "dimensions"):
			c.Fix = fmt.Sprintf("name another collection in [memory.qdrant] collection (relay makes it), or delete collection %s so it is made anew", qc.Collection)
		case strings.Contains(err.Error(), "401"), strings.Contains(err.Error(), "403"):
			c.Fix = "set [memory.qdrant] api_key_env to the variable holding Qdrant's API key"
		default:
			c.Fix = "check [memory.qdrant] url and collection against the server"
		}
	case r.Exists:
		c.OK = true
		c.Detail = fmt.Sprintf("qdrant %s at %s: collection %s, %d dimensions, %d points", r.Version, qc.URL, qc.Collection, r.Dimensions, r.Points)
	default:
		c.OK = true
		c.Detail = fmt.Sprintf("qdrant %s at %s: collection %s is made with the first memory", r.Version, qc.URL, qc.Collection)
	}
	return c
}
