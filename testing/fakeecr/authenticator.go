package fakeecr

import (
	"crypto/subtle"
	"strconv"
	"strings"
)

// passwordPrefix is the fixed part of every generated password; see Password.
const passwordPrefix = "fake-ecr-password-"

// Authenticator returns a credential check for a fake registry that trusts
// this fake's tokens, as an ECR registry trusts GetAuthorizationToken's
// (pass it to fakeregistry.WithAuthenticator). It accepts the user name
// "AWS" with a password the fake issued that has not expired by the fake's
// clock:
//
//   - Password(region, n) when region has received at least n calls, until
//     the token lifetime after the nth call arrived (WithClock); the
//     password of a call that failed is accepted too, although no client
//     ever received it, so only a test that forges it can present it;
//   - a password pinned with SetToken while it is pinned, once region has
//     received a call, until its expiresAt (a zero expiresAt never expires
//     while pinned).
//
// Rotation therefore works as in ECR: a new token does not revoke earlier
// ones, each simply expires on its own. The check is safe for concurrent
// use and never calls back into a registry.
func (e *ECR) Authenticator() func(username, password string) bool {
	return func(username, password string) bool {
		return username == "AWS" && e.issuedAndValid(password)
	}
}

func (e *ECR) issuedAndValid(password string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.clock.Now()
	for _, r := range e.regions {
		if p := r.pinned; p != nil && r.calls > 0 &&
			subtle.ConstantTimeCompare([]byte(p.password), []byte(password)) == 1 {
			if p.expiresAt.IsZero() || now.Before(p.expiresAt) {
				return true
			}
		}
	}
	region, n, ok := parsePassword(password)
	if !ok {
		return false
	}
	r, ok := e.regions[region]
	if !ok || n > r.calls {
		return false
	}
	// serve records the request and counts the call under one lock, so the
	// region's nth request is its nth call.
	seen := 0
	for _, req := range e.requests {
		if req.Region != region {
			continue
		}
		if seen++; seen == n {
			return now.Before(req.Time.Add(e.lifetime))
		}
	}
	return false
}

// parsePassword inverts Password. It accepts only what Password produces.
func parsePassword(password string) (region string, n int, ok bool) {
	rest, ok := strings.CutPrefix(password, passwordPrefix)
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 1 || Password(rest[:i], n) != password {
		return "", 0, false
	}
	return rest[:i], n, true
}
