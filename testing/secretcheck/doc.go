// Package secretcheck fails a test when a secret it was told to watch
// shows up where secrets must never go: a log line, an error string, a
// panic message, a Prometheus metric (name, help, label name or value) or
// the output of a command.
//
// A Checker belongs to one test. Make it with New, tell it the secrets
// with Watch (or WatchFunc, for secrets known only once the code under
// test has run, such as the passwords a fake ECR API handed out), and give
// the code under test its Logger, its errors (CheckError), its output
// (CheckText, Writer), the panics it raises (CheckPanic) and its metrics
// registry (CheckRegistry):
//
//	sc := secretcheck.New(t)
//	sc.WatchFunc(func() []string { return issuedPasswords(ecr) })
//	kc, _ := registryauth.NewKeychain(registryauth.WithLogger(sc.Logger()), ...)
//	_, err := kc.Credential(ctx, host)
//	sc.CheckError(err)
//	sc.CheckRegistry(promRegistry)
//
// Everything handed over is checked at once against the secrets known so
// far, kept, and checked again against every secret known when the test
// ends (t.Cleanup), so the order of Watch and the checks does not matter.
//
// # What counts as a secret's appearance
//
// Watch takes the secret itself (a token, a password, a dockerconfigjson
// "auth" value) and also looks for the forms it takes on its way to a
// leak: standard and URL-safe base64, with and without padding; the
// base64 of "AWS:<secret>" (an ECR authorization token, a dockerconfigjson
// "auth" value for ECR); URL query and path escaping; JSON string
// escaping; and the secret inside any longer base64 text, whatever its
// alignment (a whole pull secret base64-encoded in a Kubernetes Secret).
// When the secret is itself base64 of "user:password", the password is
// watched as well.
//
// A failure names where the secret was found and which form matched,
// with the secret replaced by <REDACTED>: the test log never repeats a
// secret. Secrets shorter than MinLength are refused (they would match by
// chance).
package secretcheck
