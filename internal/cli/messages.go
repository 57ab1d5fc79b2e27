package cli

import "context"

func runSend(ctx context.Context, env *Env, args []string) error { return errNotBuilt }

func runAgents(ctx context.Context, env *Env, args []string) error { return errNotBuilt }

func runLog(ctx context.Context, env *Env, args []string) error { return errNotBuilt }
