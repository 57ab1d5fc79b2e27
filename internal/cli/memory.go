package cli

import "context"

func runMemory(ctx context.Context, env *Env, args []string) error { return errNotBuilt }
