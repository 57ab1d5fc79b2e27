//go:build !lean

package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/relayhq/relay/internal/config"
	"github.com/relayhq/relay/internal/memory"
	"github.com/relayhq/relay/internal/termsafe"
)

// memoryConfig is the [memory] section of the configuration in force
// here (the user file and the project around the working folder).
func memoryConfig(env *Env) (config.Memory, error) {
	wd, _ := os.Getwd()
	c, err := config.Load(config.Sources{ProjectDir: wd, Env: env.getenv})
	if err != nil {
		return config.Memory{}, err
	}
	return c.Memory, nil
}

// embedderConfig turns [memory.embedder] into the memory package's
// terms, reading the API key from the variable it names.
func embedderConfig(e config.Embedder, getenv func(string) string) memory.EmbedderConfig {
	c := memory.EmbedderConfig{Provider: e.Provider, URL: e.URL, Model: e.Model, Dimensions: e.Dimensions}
	if e.APIKeyEnv != "" {
		c.APIKey = getenv(e.APIKeyEnv)
	}
	return c
}

// openStore opens the memory file at path with the embedder of mc, if
// any. background runs the embedding loop (the hub's store); a
// short-lived command leaves it to the hub.
func openStore(env *Env, path string, mc config.Memory, background bool, log *slog.Logger) (*memory.Store, error) {
	opts := &memory.Options{NoBackground: !background, Logger: log}
	if mc.Embedder.Provider != "" {
		em, err := memory.NewEmbedder(embedderConfig(mc.Embedder, env.getenv))
		if err != nil {
			return nil, fmt.Errorf("[memory.embedder]: %w", err)
		}
		opts.Embedder = em
	}
	return memory.Open(path, opts)
}

// qdrantConfig turns [memory.qdrant] into the memory package's terms,
// reading the API key from the variable it names.
func qdrantConfig(q config.Qdrant, getenv func(string) string) memory.QdrantConfig {
	c := memory.QdrantConfig{URL: q.URL, Collection: q.Collection}
	if c.Collection == "" {
		c.Collection = config.DefaultQdrantCollection
	}
	if q.APIKeyEnv != "" {
		c.APIKey = getenv(q.APIKeyEnv)
	}
	return c
}

// openQdrantStore opens the memory file at path with its vectors in the
// Qdrant collection of mc; background runs the loop that sends them (the
// hub's store).
func openQdrantStore(env *Env, path string, mc config.Memory, background bool, log *slog.Logger) (*memory.QdrantStore, error) {
	if mc.Embedder.Provider == "" {
		return nil, fmt.Errorf("[memory] backend = \"qdrant\" needs [memory.embedder] (docs/memory.md)")
	}
	em, err := memory.NewEmbedder(embedderConfig(mc.Embedder, env.getenv))
	if err != nil {
		return nil, fmt.Errorf("[memory.embedder]: %w", err)
	}
	st, err := memory.OpenQdrant(path, qdrantConfig(mc.Qdrant, env.getenv), &memory.Options{Embedder: em, NoBackground: !background, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("[memory.qdrant]: %w", err)
	}
	return st, nil
}

// localMemory opens the memory file at path by [memory] backend, for one
// command (no background loop).
func localMemory(env *Env, path string, mc config.Memory) (memory.API, func() error, error) {
	if mc.Backend == config.BackendQdrant {
		st, err := openQdrantStore(env, path, mc, false, nil)
		if err != nil {
			return nil, nil, err
		}
		return st, st.Close, nil
	}
	st, err := openStore(env, path, mc, false, nil)
	if err != nil {
		return nil, nil, err
	}
	return st, st.Close, nil
}

// openBackend opens what the hub serves memory from: by [memory] backend.
func openBackend(ctx context.Context, env *Env, home string, mc config.Memory, log *slog.Logger) (memory.API, func() error, error) {
	switch mc.Backend {
	case "", config.BackendSQLite:
		st, err := openStore(env, memory.DefaultPath(home), mc, true, log)
		if err != nil {
			return nil, nil, err
		}
		return st, st.Close, nil
	case config.BackendQdrant:
		st, err := openQdrantStore(env, memory.DefaultPath(home), mc, true, log)
		if err != nil {
			return nil, nil, err
		}
		log.Info("memory: vectors in qdrant", "url", st.URL(), "collection", st.Collection())
		return st, st.Close, nil
	}
	return nil, nil, fmt.Errorf("[memory] backend = %q: want sqlite or qdrant (docs/memory.md)", mc.Backend)
}

// runReindex is `relay memory reindex`: every memory of the file in
// RELAY_HOME gets its vector made again, with progress on stderr (a
// line at most every half second, and the last).
func runReindex(ctx context.Context, env *Env, asJSON bool) error {
	mc, err := memoryConfig(env)
	if err != nil {
		return err
	}
	if mc.Embedder.Provider == "" {
		return usagef("reindex needs an embedder: set [memory.embedder] provider and model (docs/memory.md)")
	}
	home, err := env.EnsureHome()
	if err != nil {
		return err
	}
	api, closeStore, err := localMemory(env, memory.DefaultPath(home), mc)
	if err != nil {
		return err
	}
	defer closeStore()
	st := api.(interface {
		Reindex(ctx context.Context, progress func(done, total int)) error
	})
	start := time.Now()
	var last time.Time
	done, total := 0, 0
	err = st.Reindex(ctx, func(d, t int) {
		done, total = d, t
		if now := time.Now(); now.Sub(last) >= 500*time.Millisecond || d == t {
			last = now
			fmt.Fprintf(env.Stderr, "relay memory: reindexed %d of %d\n", d, t)
		}
	})
	if err != nil {
		return err
	}
	took := time.Since(start).Round(time.Millisecond)
	if asJSON {
		return memJSON(env.Stdout, map[string]any{"reindexed": done, "total": total, "ms": took.Milliseconds()})
	}
	fmt.Fprintf(env.Stdout, "reindexed %d %s with %s in %s\n", done, memPlural(done, "memory", "memories"), termsafe.Line(mc.Embedder.Model), took)
	return nil
}
