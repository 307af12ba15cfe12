package cli

import (
	"fmt"
	"strings"

	"github.com/engine-dev/engine/engine"
	"github.com/spf13/cobra"
)

// strictUsage makes every way of calling a command wrongly bad input
// (engine.ErrInvalid, exit status 2) instead of a plain cobra error or help
// with status 0:
//
//   - a group (engine, engine query, engine lessons, ...) given a word that
//     is none of its subcommands fails with `unknown command "X" for
//     "engine query"` and cobra's "Did you mean this?"; a bare group prints
//     its help (status 0);
//   - positional-argument validators (cobra.NoArgs, MinimumNArgs, ...) and
//     missing required or conflicting flags are marked bad input;
//   - `engine help X` for a command that does not exist fails the same way.
//
// Flag parse errors are marked by the root's FlagErrorFunc.
func strictUsage(root *cobra.Command) {
	root.SetHelpCommand(helpCommand(root))
	root.InitDefaultCompletionCmd() // now, so that the walk covers it too
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasSubCommands() && !c.Runnable() {
			c.Args = cobra.ArbitraryArgs
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return unknownCommand(cmd, args[0])
				}
				return cmd.Help()
			}
		} else if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error {
				return engine.MarkInvalid(args(cmd, a))
			}
		}
		pre := c.PreRunE
		c.PreRunE = func(cmd *cobra.Command, args []string) error {
			// cobra checks these after PreRunE and returns plain errors.
			if err := cmd.ValidateRequiredFlags(); err != nil {
				return engine.MarkInvalid(err)
			}
			if err := cmd.ValidateFlagGroups(); err != nil {
				return engine.MarkInvalid(err)
			}
			if pre != nil {
				return pre(cmd, args)
			}
			return nil
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// unknownCommand is cobra's own message for a word that names no
// subcommand of group, with its suggestions, as bad input.
func unknownCommand(group *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, group.CommandPath())
	if group.SuggestionsMinimumDistance <= 0 {
		group.SuggestionsMinimumDistance = 2 // cobra's default
	}
	if s := group.SuggestionsFor(word); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	}
	return engine.MarkInvalid(fmt.Errorf("%s", msg))
}

// helpCommand is `engine help [command]`: cobra's, except that a command
// path that does not exist is bad input rather than the root's usage with
// status 0.
func helpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := root.Find(args)
			if err != nil {
				return engine.MarkInvalid(err)
			}
			if len(rest) > 0 {
				// Find stops at the deepest command it knows; the rest is
				// either a typo'd subcommand or arguments, not a topic.
				return unknownCommand(cmd, rest[0])
			}
			return cmd.Help()
		},
	}
}
