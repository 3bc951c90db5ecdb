package main

import (
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/client"
	"github.com/toolwire/toolwire/subjects"
)

func newCancel() *cobra.Command {
	var (
		natsURL, turn, tenant, reason string
		discard                       bool
		auth                          natsAuth
	)
	cmd := &cobra.Command{
		Use:   "cancel --turn ID",
		Short: "Interrupt a turn (or, with --discard, discard its unfinished calls)",
		Long: `cancel sends turn_cancel, as a user's interrupt: calls not started never run,
running calls of tools that allow it (Bash) are stopped, and each gets the rejection
result. With --discard it sends turn_discard instead: every unfinished call is stopped
and the turn is closed at the calls seen so far.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if turn == "" {
				return fmt.Errorf("cancel: --turn ID is required")
			}
			opts, err := auth.options()
			if err != nil {
				return usageError("cancel: %w", err)
			}
			natsURL = natsURLOrEnv(cmd, natsURL)
			nc, err := nats.Connect(natsURL, append([]nats.Option{nats.Name("toolwire-cancel")}, opts...)...)
			if err != nil {
				return fmt.Errorf("cancel: connect %s: %w", natsURL, err)
			}
			defer nc.Close()
			cl, err := client.New(nc, client.Config{Space: subjects.Default(), Tenant: tenant})
			if err != nil {
				return err
			}
			if discard {
				err = cl.Discard(cmd.Context(), turn, reason)
			} else {
				err = cl.Cancel(cmd.Context(), turn, reason)
			}
			if err != nil {
				return fmt.Errorf("cancel: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&natsURL, "nats", nats.DefaultURL, "NATS server of the pipeline")
	f.StringVar(&turn, "turn", "", "the turn's id")
	f.StringVar(&tenant, "tenant", subjects.DefaultTenant, "the turn's tenant")
	f.StringVar(&reason, "reason", "", "why (recorded in the event)")
	f.BoolVar(&discard, "discard", false, "discard the turn instead of interrupting it")
	auth.register(f)
	return cmd
}
