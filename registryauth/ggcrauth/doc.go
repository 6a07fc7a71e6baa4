// Package ggcrauth plugs a registryauth.CredentialSource (the process's ECR
// keychain) into go-containerregistry as an authn.Keychain, also
// implementing authn.ContextKeychain so that remote calls pass their
// context through.
//
// For a registry that is not Amazon ECR, or is ECR Public, the keychain
// answers authn.Anonymous with no error. In go-containerregistry that means
// "not mine": authn.NewMultiKeychain(ggcrauth.NewKeychain(kc),
// authn.DefaultKeychain) moves on to the next keychain, so ECR hosts get
// fresh tokens and every other host keeps its usual credentials. Put this
// keychain first: it then wins over any ECR entry a pull secret may hold.
//
// For an ECR registry a failure to get a token is returned as an error that
// wraps the source's error, so errors.Is(err, registryauth.ErrAccessDenied)
// and the other sentinels work on what remote.Image returns. The failure is
// never swallowed into anonymous access (which would turn an IAM problem
// into a bare 401), unlike authn.NewKeychainFromHelper.
//
// The authenticator returned for an ECR registry asks the source on every
// use rather than capturing one token: a warm keychain answers from memory,
// and a transport that outlives a token follows its rotation. It never
// prints the password.
package ggcrauth
