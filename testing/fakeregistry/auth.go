package fakeregistry

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"sync"
)

type staticCredential struct{ user, pass string }

// authState decides whether a request's Basic credentials are valid. Credentials are remembered
// only as SHA-256 digests, so nothing secret sits in the registry's memory longer than a request.
type authState struct {
	anonymous     bool
	static        *staticCredential
	authenticator func(username, password string) bool

	mu       sync.Mutex
	accepted map[[sha256.Size]byte]struct{} // accepted since the last RevokeAll
	revoked  map[[sha256.Size]byte]struct{}
}

func newAuthState(c config) *authState {
	a := &authState{
		anonymous:     c.anonymous,
		authenticator: c.authenticator,
		accepted:      map[[sha256.Size]byte]struct{}{},
		revoked:       map[[sha256.Size]byte]struct{}{},
	}
	if c.hasBasic {
		a.static = &staticCredential{user: c.basicUser, pass: c.basicPass}
		a.authenticator = func(u, p string) bool {
			// Constant time, as a real registry would compare.
			return subtle.ConstantTimeCompare([]byte(u), []byte(a.static.user)) == 1 &&
				subtle.ConstantTimeCompare([]byte(p), []byte(a.static.pass)) == 1
		}
	}
	return a
}

func credentialKey(user, pass string) [sha256.Size]byte {
	return sha256.Sum256([]byte(user + "\x00" + pass))
}

func (a *authState) allowed(req *http.Request) bool {
	if a.anonymous {
		return true
	}
	user, pass, ok := req.BasicAuth()
	if !ok {
		return false
	}
	key := credentialKey(user, pass)
	// One lock around check and record: a RevokeAll racing with this request either sees the
	// credential recorded (and revokes it) or this request fails.
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, gone := a.revoked[key]; gone {
		return false
	}
	if !a.authenticator(user, pass) {
		return false
	}
	a.accepted[key] = struct{}{}
	return true
}

// RevokeAll makes every credential the registry has accepted so far invalid, as an expired or
// revoked ECR token: such requests get 401 until the client presents a credential the registry
// has not seen before and the authenticator accepts. With WithBasicAuth or the default static
// credential there is no new credential, so the registry stays closed.
func (r *Registry) RevokeAll() {
	a := r.auth
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.static != nil {
		// The static credential counts as current even if no request used it yet.
		a.accepted[credentialKey(a.static.user, a.static.pass)] = struct{}{}
	}
	for k := range a.accepted {
		a.revoked[k] = struct{}{}
	}
	a.accepted = map[[sha256.Size]byte]struct{}{}
}
