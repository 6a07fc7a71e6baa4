package nodeconfig

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"text/template"
)

// helperVersion changes when the helper's behaviour does.
const helperVersion = "1 (hypershift-ecr pkg/nodeconfig)"

var (
	//go:embed helper.sh.tmpl
	helperTemplateText string
	//go:embed response.awk
	responseAWK string

	helperTemplate = template.Must(template.New("helper").Parse(helperTemplateText))
)

type helperData struct {
	Program, Name, Plugin, Args, Env, APIVersion, HostRegex, ResponseAWK, Version string
	CacheSeconds                                                                  int64
	Aliases                                                                       []struct{ Host, Target string }
}

func (c *config) helper() ([]byte, error) {
	re, err := hostRegex()
	if err != nil {
		return nil, err
	}
	if strings.Contains(responseAWK, "'") {
		// It is embedded between single quotes.
		return nil, fmt.Errorf("nodeconfig: response.awk must not contain a single quote")
	}
	d := helperData{
		Program:      shellQuote("docker-credential-" + c.HelperName),
		Name:         c.HelperName,
		Plugin:       shellQuote(c.PluginPath),
		APIVersion:   shellQuote(pluginAPIVersion),
		HostRegex:    shellQuote(re),
		ResponseAWK:  shellQuote(compactAWK(responseAWK)),
		Version:      helperVersion,
		CacheSeconds: c.cacheSecs,
	}
	args := make([]string, len(c.PluginArgs))
	for i, a := range c.PluginArgs {
		args[i] = shellQuote(a)
	}
	d.Args = strings.Join(args, " ")
	env := make([]string, len(c.env))
	for i, e := range c.env {
		env[i] = shellQuote(e.Name + "=" + e.Value)
	}
	d.Env = strings.Join(env, " ")
	for _, a := range c.aliases {
		d.Aliases = append(d.Aliases, struct{ Host, Target string }{shellQuote(a.host), shellQuote(a.target)})
	}
	var b bytes.Buffer
	if err := helperTemplate.Execute(&b, d); err != nil {
		return nil, fmt.Errorf("nodeconfig: rendering the helper: %w", err)
	}
	return b.Bytes(), nil
}

// shellQuote quotes s for bash as one word, with no expansion.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// compactAWK drops the full-line comments and blank lines of an awk
// program; the commented source is response.awk in this package.
func compactAWK(prog string) string {
	var b strings.Builder
	for line := range strings.Lines(prog) {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}
