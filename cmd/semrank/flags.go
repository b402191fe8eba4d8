package main

// Numeric flags are checked before any work: a value the code would read
// as its default, or one that is no number, is a mistake.

import (
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// checkFinite refuses a NaN or infinite value for any float flag of cmd.
func checkFinite(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || (f.Value.Type() != "float64" && f.Value.Type() != "float32") {
			return
		}
		if v, perr := strconv.ParseFloat(f.Value.String(), 64); perr == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			err = fmt.Errorf("--%s %s: want a finite number", f.Name, f.Value)
		}
	})
	return err
}

// checkNonNegative refuses a negative value for the named numeric flags of
// cmd (where 0 has a meaning, such as "all", but a negative value would be
// read as 0 or as the default).
func checkNonNegative(cmd *cobra.Command, names ...string) error {
	return checkFlags(cmd, names, func(v float64) bool { return v >= 0 }, "zero or a positive number")
}

// checkPositive refuses a zero or negative value for the named numeric
// flags of cmd. The model configurations read a non-positive size as "the
// default", which is right for a Go caller's zero value but would turn a
// mistyped --dim -3 into a silent 100.
func checkPositive(cmd *cobra.Command, names ...string) error {
	return checkFlags(cmd, names, func(v float64) bool { return v > 0 }, "a positive number")
}

// checkFlags refuses a value of the named numeric flags of cmd that ok
// rejects, saying what is wanted.
func checkFlags(cmd *cobra.Command, names []string, ok func(float64) bool, want string) error {
	for _, name := range names {
		f := cmd.Flags().Lookup(name)
		if f == nil {
			continue
		}
		v, err := strconv.ParseFloat(f.Value.String(), 64)
		if err != nil {
			return fmt.Errorf("--%s %s: not a number", name, f.Value)
		}
		if !ok(v) {
			return fmt.Errorf("--%s %s: want %s", name, f.Value, want)
		}
	}
	return nil
}

// checkUnused refuses any of the named flags of cmd that was set although
// the command, as invoked, does not read it: why says when it does, as in
// "applies to --cv only". A value silently ignored would look used.
func checkUnused(cmd *cobra.Command, why string, names ...string) error {
	for _, name := range names {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s %s", name, why)
		}
	}
	return nil
}
