package cli

import "context"

func runConfig(ctx context.Context, env *Env, args []string) error { return errNotBuilt }
