package cli

import "context"

func runWrap(ctx context.Context, env *Env, args []string) error { return errNotBuilt }
