package cli

import "context"

func runUp(ctx context.Context, env *Env, args []string) error { return errNotBuilt }

func runDown(ctx context.Context, env *Env, args []string) error { return errNotBuilt }
