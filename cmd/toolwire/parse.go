package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolwire/toolwire/internal/parselines"
	"github.com/toolwire/toolwire/modelstream/chunks"
	"github.com/toolwire/toolwire/modelstream/formats"
)

func newParse() *cobra.Command {
	var (
		format  string
		chunked bool
	)
	cmd := &cobra.Command{
		Use:   "parse --format FORMAT [FILE]",
		Short: "Parse a model's response stream and print each tool call the moment it is complete",
		Long: `parse reads a model response stream (FILE, or stdin) and prints one JSON object per
line, each written the moment it is known:
  {"seq":0,"id":"…","name":"…","input":{…},"complete":true,"at":N}
for each call (at: the byte offset just past the event that completed it; a call that
never completed has "complete":false, an "error" and no "input"), then
  {"end":true,"calls":N,"stop_reason":"…","error":null|"…","warnings":N,"warning":"…"}
(warnings: what was skipped without failing the stream, the first described). When
the end record carries an error, parse exits 1 after printing it.
Formats: ` + strings.Join(formats.Names(), ", ") + `. With --chunks the input is a
.chunks.jsonl capture (one data payload per line) and offsets are into that file.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			parser, err := formats.Parser(format)
			if err != nil {
				return fmt.Errorf("parse: %w", err)
			}
			var in io.Reader = cmd.InOrStdin()
			if len(args) == 1 {
				f, err := os.Open(args[0])
				if err != nil {
					return fmt.Errorf("parse: %w", err)
				}
				defer f.Close()
				in = f
			}
			var at func(int64) int64
			if chunked {
				cr := chunks.NewReader(in)
				in, at = cr, cr.FileOffset
			}
			failure, err := parselines.Print(cmd.Context(), cmd.OutOrStdout(), parser, in, at)
			if err != nil {
				return fmt.Errorf("parse: %w", err)
			}
			if failure != "" {
				// Everything is printed; the status tells scripts the stream itself failed.
				return fmt.Errorf("parse: the stream failed: %s", failure)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "stream format: "+strings.Join(formats.Names(), ", "))
	cmd.Flags().BoolVar(&chunked, "chunks", false, "the input is a .chunks.jsonl capture: one SSE data payload per line")
	_ = cmd.MarkFlagRequired("format")
	return cmd
}
