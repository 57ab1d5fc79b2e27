package cli

import "context"

func runScan(ctx context.Context, env *Env, args []string) error { return errNotBuilt }
