package patterns

import (
	"context"
	"errors"
	"testing"
)

func TestRegistryOrderStopAndErrors(t *testing.T) {
	r := NewRegistry()
	var ran []string
	add := func(ns, name string, res Result, err error) {
		t.Helper()
		if e := r.Handle(ns, func(ctx context.Context, c Command) (Result, error) {
			ran = append(ran, name)
			return res, err
		}); e != nil {
			t.Fatal(e)
		}
	}
	boom := errors.New("boom")
	add("memory", "builtin", Result{Inject: "found 2"}, nil)
	add("Memory", "user-failing", Result{}, boom)
	add("memory", "user-stop", Result{Stop: true, Inject: "done"}, nil)
	add("memory", "never", Result{}, nil)
	add("deploy", "deploy", Result{}, nil)

	results, err := r.Dispatch(context.Background(), Command{NS: "memory", Target: "search"})
	if want := []string{"builtin", "user-failing", "user-stop"}; !equalStrings(ran, want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
	if !errors.Is(err, boom) {
		t.Errorf("error %v does not carry the handler's error", err)
	}
	if len(results) != 2 || results[0].Inject != "found 2" || !results[1].Stop {
		t.Errorf("results %+v", results)
	}
	if _, err := r.Dispatch(context.Background(), Command{NS: "nothing"}); !errors.Is(err, ErrNoHandler) {
		t.Errorf("unknown namespace: %v, want ErrNoHandler", err)
	}
	if !r.Namespaces().Has("DEPLOY") || !r.Namespaces().Has("relay") {
		t.Errorf("namespaces %v lack deploy or the built-ins", r.Namespaces().Names())
	}
	if err := r.Handle("bad ns", func(context.Context, Command) (Result, error) { return Result{}, nil }); err == nil {
		t.Error("Handle accepted an invalid namespace")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Dispatch(ctx, Command{NS: "deploy"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled dispatch: %v", err)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDispatchRecoversPanic checks that a panicking handler fails alone:
// the handlers after it still run and the panic comes back as an error.
func TestDispatchRecoversPanic(t *testing.T) {
	r := NewRegistry()
	var ran []string
	_ = r.Handle("deploy", func(context.Context, Command) (Result, error) { panic("boom") })
	_ = r.Handle("deploy", func(context.Context, Command) (Result, error) {
		ran = append(ran, "second")
		return Result{Inject: "ok"}, nil
	})
	var nilMap map[string]int
	_ = r.Handle("crash", func(context.Context, Command) (Result, error) { nilMap["x"] = 1; return Result{}, nil })

	results, err := r.Dispatch(context.Background(), Command{NS: "deploy", Target: "prod"})
	var pe *PanicError
	var he *HandlerError
	if !errors.As(err, &pe) || pe.Value != "boom" || len(pe.Stack) == 0 {
		t.Fatalf("error %v, want a *PanicError of boom with its stack", err)
	}
	if !errors.As(err, &he) || he.Index != 1 || he.Of != 2 || he.NS != "deploy" {
		t.Errorf("handler error %+v", he)
	}
	if len(ran) != 1 || len(results) != 1 || results[0].Inject != "ok" {
		t.Errorf("ran %v results %+v: the handler after the panic must run", ran, results)
	}
	if _, err := r.Dispatch(context.Background(), Command{NS: "crash"}); !errors.As(err, &pe) {
		t.Errorf("runtime panic: %v, want a *PanicError", err)
	}
}
