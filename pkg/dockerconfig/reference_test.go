package dockerconfig

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// This file holds a reference parser built on encoding/json alone, the
// slow and obviously-right way to read the documents Parse reads. The
// differential fuzz target and some table tests check that Parse agrees
// with it: same accept/reject decision, same reason and host for
// documents that are valid JSON, same entries, same Marshal output.

type refResult struct {
	fields  map[string]json.RawMessage // top-level members other than auths
	entries map[string]json.RawMessage // auths members (or the legacy top level)
	creds   map[string]Entry
	secrets []string // every auth, password and identitytoken value, decoded
}

// refSemanticError is a rejection of a document that is valid JSON.
type refSemanticError struct{ host, reason string }

func (e *refSemanticError) Error() string { return e.host + ": " + e.reason }

var errRefSyntax = errors.New("invalid JSON")

func refParse(data []byte) (*refResult, error) {
	r := &refResult{creds: map[string]Entry{}}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return r, nil
	}
	if !json.Valid(data) {
		return nil, errRefSyntax
	}
	if trimmed[0] != '{' {
		return nil, &refSemanticError{reason: reasonNotObject}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, err
	}
	if auths, ok := top["auths"]; ok {
		if auths[0] != '{' {
			return nil, &refSemanticError{reason: reasonAuthsType}
		}
		if err := json.Unmarshal(auths, &r.entries); err != nil {
			return nil, err
		}
		delete(top, "auths")
		r.fields = top
	} else if refIsLegacy(top) {
		r.entries = top
	} else {
		r.fields = top
	}
	for _, host := range refSortedKeys(r.entries) {
		if norm := NormalizeKey(host); norm == "" || norm[0] == '/' {
			return nil, &refSemanticError{host, reasonEmptyHost}
		}
		raw := r.entries[host]
		if raw[0] != '{' {
			return nil, &refSemanticError{host, reasonEntryType}
		}
		var f map[string]json.RawMessage
		if err := json.Unmarshal(raw, &f); err != nil {
			return nil, err
		}
		var vals [3]string
		for i, name := range []string{"auth", "username", "password"} {
			v, ok := f[name]
			if !ok {
				continue
			}
			if v[0] != '"' {
				return nil, &refSemanticError{host, name + " is not a string"}
			}
			if err := json.Unmarshal(v, &vals[i]); err != nil {
				return nil, err
			}
		}
		for _, name := range []string{"auth", "password", "identitytoken"} {
			var s string
			if v, ok := f[name]; ok && json.Unmarshal(v, &s) == nil && s != "" {
				r.secrets = append(r.secrets, s)
			}
		}
		e := Entry{Username: vals[1], Password: vals[2]}
		if auth := vals[0]; auth != "" {
			b, err := base64.StdEncoding.DecodeString(auth)
			if err != nil {
				return nil, &refSemanticError{host, reasonAuthBase64}
			}
			user, pass, ok := strings.Cut(string(b), ":")
			if !ok {
				return nil, &refSemanticError{host, reasonAuthNoColon}
			}
			e = Entry{Username: user, Password: pass}
			r.secrets = append(r.secrets, pass)
		}
		r.creds[host] = e
	}
	return r, nil
}

func refIsLegacy(top map[string]json.RawMessage) bool {
	for k := range top {
		if !strings.ContainsAny(k, ".:/") && !strings.EqualFold(k, "localhost") {
			return false
		}
	}
	return len(top) > 0
}

func refSortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// refMarshal is what Marshal must write for r: sorted keys encoded by
// encoding/json, values compacted by encoding/json.
func refMarshal(r *refResult) []byte {
	fields := map[string]json.RawMessage{}
	for k, v := range r.fields {
		fields[k] = v
	}
	var auths bytes.Buffer
	auths.WriteByte('{')
	for i, k := range refSortedKeys(r.entries) {
		if i > 0 {
			auths.WriteByte(',')
		}
		refWriteMember(&auths, k, r.entries[k])
	}
	auths.WriteByte('}')
	fields["auths"] = auths.Bytes()
	var out bytes.Buffer
	out.WriteByte('{')
	for i, k := range refSortedKeys(fields) {
		if i > 0 {
			out.WriteByte(',')
		}
		refWriteMember(&out, k, fields[k])
	}
	out.WriteByte('}')
	return out.Bytes()
}

func refWriteMember(b *bytes.Buffer, k string, v json.RawMessage) {
	kb, _ := json.Marshal(k)
	b.Write(kb)
	b.WriteByte(':')
	_ = json.Compact(b, v)
}

// refAugment is BenchmarkAugmentShape50 done with the reference parser and
// encoding/json's Marshal: the baseline the scanner is measured against.
func refAugment(data []byte, host1, host2, token string) ([]byte, error) {
	r, err := refParse(data)
	if err != nil {
		return nil, err
	}
	entry, _ := json.Marshal(map[string]string{"auth": token})
	r.entries[host1] = entry
	r.entries[host2] = entry
	auths, _ := json.Marshal(r.entries)
	if r.fields == nil {
		r.fields = map[string]json.RawMessage{}
	}
	r.fields["auths"] = auths
	return json.Marshal(r.fields)
}
