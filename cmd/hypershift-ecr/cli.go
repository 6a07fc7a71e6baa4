package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/google/go-containerregistry/pkg/authn"
)

const progName = "hypershift-ecr"

// Exit codes, as oc and kubectl use them.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed, or a check failed
	exitUsage   = 2 // bad flags, arguments or input files
)

// run is the whole program; main only connects it to the process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return newCLI(stdin, stdout, stderr).run(ctx, args)
}

// callerIdentityAPI is the STS call `credentials` makes, with the SDK's
// signature so that *sts.Client satisfies it.
type callerIdentityAPI interface {
	GetCallerIdentity(ctx context.Context, in *sts.GetCallerIdentityInput, optFns ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error)
}

var _ callerIdentityAPI = (*sts.Client)(nil)

// cli holds the process's streams and the seams tests replace: nothing here
// is exported, and every default is the production one.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer

	// loadAWSConfig loads the SDK configuration for the AWS-backed commands.
	loadAWSConfig func(ctx context.Context, optFns ...func(*config.LoadOptions) error) (aws.Config, error)
	// newSTS returns the client that answers sts:GetCallerIdentity in region.
	newSTS func(cfg aws.Config, region string) callerIdentityAPI
	// transport carries registry traffic; nil is go-containerregistry's default.
	transport http.RoundTripper
	// registryKeychain gives credentials for registries that are not ECR
	// (quay.io's release repositories are public; a docker config may hold
	// a robot account).
	registryKeychain authn.Keychain
	// dialer and lookupHost reach the network for preflight's reachability
	// checks; nil is the system's.
	dialer     func(ctx context.Context, network, addr string) (net.Conn, error)
	lookupHost func(ctx context.Context, host string) ([]string, error)
	// getenv reads the environment (preflight infers STS use from it).
	getenv func(string) string
}

func newCLI(stdin io.Reader, stdout, stderr io.Writer) *cli {
	return &cli{
		stdin:         stdin,
		stdout:        stdout,
		stderr:        stderr,
		loadAWSConfig: config.LoadDefaultConfig,
		newSTS: func(cfg aws.Config, region string) callerIdentityAPI {
			return sts.NewFromConfig(cfg, func(o *sts.Options) {
				if region != "" {
					o.Region = region
				}
			})
		},
		registryKeychain: authn.DefaultKeychain,
		getenv:           os.Getenv,
	}
}

// command is one subcommand. setup registers its flags and returns the
// function that runs it with the positional arguments.
type command struct {
	name        string
	summary     string // one line for the root help
	usage       string // after "hypershift-ecr "
	description string
	example     string
	setup       func(c *cli, fs *flag.FlagSet) func(ctx context.Context, args []string) error
}

func commands() []*command {
	return []*command{demoCommand(), resolveCommand(), preflightCommand(), credentialsCommand(),
		credentialProviderCommand(), nodeConfigCommand()}
}

func (c *cli) run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		c.fail("", usagef("no command given; run '%s --help' for the commands", progName))
		return exitUsage
	}
	switch name := args[0]; name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 1 {
			if cmd := lookupCommand(args[1]); cmd != nil {
				c.printCommandHelp(cmd)
				return exitOK
			}
			c.fail("", usagef("unknown command %q; run '%s --help' for the commands", args[1], progName))
			return exitUsage
		}
		c.printRootHelp()
		return exitOK
	default:
		cmd := lookupCommand(name)
		if cmd == nil {
			if strings.HasPrefix(name, "-") {
				c.fail("", usagef("unknown flag %s before the command; run '%s --help'", name, progName))
			} else {
				c.fail("", usagef("unknown command %q; run '%s --help' for the commands", name, progName))
			}
			return exitUsage
		}
		return c.runCommand(ctx, cmd, args[1:])
	}
}

func lookupCommand(name string) *command {
	for _, cmd := range commands() {
		if cmd.name == name {
			return cmd
		}
	}
	return nil
}

func (c *cli) runCommand(ctx context.Context, cmd *command, args []string) int {
	fs := newFlagSet(cmd.name)
	exec := cmd.setup(c, fs)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.printCommandHelp(cmd)
		return exitOK
	}
	if err != nil {
		c.fail(cmd.name, usagef("%v (see '%s %s --help')", err, progName, cmd.name))
		return exitUsage
	}
	err = exec(ctx, pos)
	var ue *usageError
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		if ee.err != nil {
			c.fail(cmd.name, ee.err)
		}
		return ee.code
	case errors.As(err, &ue):
		c.fail(cmd.name, err)
		return exitUsage
	default:
		c.fail(cmd.name, err)
		return exitFailure
	}
}

// fail prints err as the one line a script or a human reads on stderr.
func (c *cli) fail(cmd string, err error) {
	prefix := progName
	if cmd != "" {
		prefix += " " + cmd
	}
	fmt.Fprintf(c.stderr, "%s: %s\n", prefix, oneLine(err.Error()))
}

// oneLine folds a multi-line message into one line.
func oneLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}

// usageError is a bad flag, argument or input: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitError ends a command with a given code; err, if any, is printed as
// the one-line reason (preflight reports its failed checks itself).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The flag package's own messages are multi-line; runCommand prints one.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseInterspersed parses flags anywhere among the positional arguments,
// as kubectl does ("resolve IMAGE --mirror a=b"); "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func (c *cli) printRootHelp() {
	w := c.stdout
	fmt.Fprintf(w, "Usage:\n  %s COMMAND [flags]\n\n", progName)
	fmt.Fprintln(w, "Resolve OpenShift release images to their Amazon ECR mirrors and serve ECR")
	fmt.Fprintln(w, "credentials that live in memory only, never in a pull secret.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, cmd := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", cmd.name, cmd.summary)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags:")
	fmt.Fprintln(w, "  -h, --help  show this help; every command has its own")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit status: 0 success, 1 failure (or a failed check), 2 usage error.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Examples:")
	fmt.Fprintf(w, "  %s demo\n", progName)
	fmt.Fprintf(w, "  %s resolve --help\n", progName)
}

func (c *cli) printCommandHelp(cmd *command) {
	w := c.stdout
	fs := newFlagSet(cmd.name)
	cmd.setup(c, fs)
	fmt.Fprintf(w, "Usage:\n  %s %s\n\n", progName, cmd.usage)
	fmt.Fprintln(w, strings.TrimSpace(cmd.description))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags:")
	printFlags(w, fs)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Examples:")
	for _, line := range strings.Split(strings.TrimSpace(cmd.example), "\n") {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// printFlags lists flags kubectl-style: "--name TYPE" on one line, then
// the usage and the default when it is not the zero value, wrapped below.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		typ, usage := flag.UnquoteUsage(f)
		name := dash + f.Name
		if typ != "" {
			name += " " + typ
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" {
			usage += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintf(w, "  %s\n", name)
		for _, l := range wrap(usage, helpWidth-6) {
			fmt.Fprintf(w, "      %s\n", l)
		}
	})
	fmt.Fprintf(w, "  -h, --help\n      show this help\n")
}

// helpWidth is the width help text is wrapped to.
const helpWidth = 90

// wrap splits s into lines of at most width columns, at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len(line)+1+len(word) > width:
			lines = append(lines, line)
			line = word
		default:
			line += " " + word
		}
	}
	return append(lines, line)
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// outputFlag is -o with a fixed set of formats, validated when parsed.
type outputFlag struct {
	value   string
	allowed []string
}

func newOutputFlag(fs *flag.FlagSet, def string, allowed ...string) *outputFlag {
	o := &outputFlag{value: def, allowed: allowed}
	fs.Var(o, "o", "output `format`: "+strings.Join(allowed, ", "))
	return o
}

func (o *outputFlag) String() string { return o.value }

func (o *outputFlag) Set(v string) error {
	for _, a := range o.allowed {
		if v == a {
			o.value = v
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(o.allowed, ", "))
}

// noArgs is the check of commands that take no positional argument.
func noArgs(args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	return nil
}
