package memory_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/relayhq/relay/internal/memory"
)

func ExampleStore() {
	dir, _ := os.MkdirTemp("", "relay-memory-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	st, err := memory.Open(memory.DefaultPath(dir), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	saved, created, _ := st.Save(ctx, memory.Memory{
		Text: "This project uses Prisma for database access", Tags: []string{"db"},
		Author: "Alice", Workspace: "shop",
	})
	fmt.Println("created:", created, "id length:", len(saved.ID))

	// The same text again (case and spacing aside) is the same memory.
	again, created, _ := st.Save(ctx, memory.Memory{Text: "this project uses prisma  for database access", Workspace: "shop"})
	fmt.Println("created:", created, "same id:", again.ID == saved.ID)

	// Stemming: "databases" finds "database". User text is never syntax.
	results, _ := st.Search(ctx, memory.Query{Text: `Prisma databases "NEAR" (`, Filter: memory.Filter{Workspace: "shop"}})
	for _, r := range results {
		fmt.Println(r.Snippet)
	}

	forgotten, _ := st.Forget(ctx, saved.ID)
	fmt.Println("forgot:", forgotten.Text)
	_, err = st.Get(ctx, saved.ID)
	fmt.Println("not found:", errors.Is(err, memory.ErrNotFound))
	fmt.Println(filepath.Base(st.Path()))
	// Output:
	// created: true id length: 8
	// created: false same id: true
	// This project uses [Prisma] for [database] access
	// forgot: This project uses Prisma for database access
	// not found: true
	// memory.db
}
