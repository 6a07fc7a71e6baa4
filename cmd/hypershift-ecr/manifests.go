package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"go.yaml.in/yaml/v2"

	"github.com/openshift/hypershift-ecr/pkg/mirrorpolicy"
)

// rulesFromManifests reads mirror rules from a YAML or JSON file: one or
// more documents (YAML "---" separated, or concatenated JSON values), each an
// ImageDigestMirrorSet, ImageTagMirrorSet, ImageContentSourcePolicy,
// HostedCluster, or a List of them (what `oc get -o yaml` prints).
//
// sigs.k8s.io/yaml is not a dependency of this module, so YAML is decoded
// with go.yaml.in/yaml/v2 and converted to JSON, which the API types decode.
func rulesFromManifests(name string, data []byte) ([]mirrorpolicy.Rule, error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var rules []mirrorpolicy.Rule
	n := 0
	for i, doc := range docs {
		r, count, err := rulesFromObject(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		n += count
		rules = append(rules, r...)
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no ImageDigestMirrorSet, ImageTagMirrorSet, ImageContentSourcePolicy or HostedCluster in it", name)
	}
	return rules, nil
}

// typeMeta is what decides how a document is decoded.
type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// rulesFromObject converts one JSON object; count is the number of mirror
// objects found (an IDMS with no mirrors still counts: it was understood).
func rulesFromObject(doc []byte) ([]mirrorpolicy.Rule, int, error) {
	var tm typeMeta
	if err := json.Unmarshal(doc, &tm); err != nil {
		return nil, 0, fmt.Errorf("not a Kubernetes object: %w", err)
	}
	group, _, _ := strings.Cut(tm.APIVersion, "/")
	switch {
	case tm.Kind == "List" || strings.HasSuffix(tm.Kind, "List") && len(tm.Items) > 0:
		var rules []mirrorpolicy.Rule
		n := 0
		for i, item := range tm.Items {
			r, c, err := rulesFromObject(item)
			if err != nil {
				return nil, 0, fmt.Errorf("items[%d]: %w", i, err)
			}
			rules, n = append(rules, r...), n+c
		}
		return rules, n, nil
	case tm.Kind == "ImageDigestMirrorSet" && group == configv1.GroupName:
		var o configv1.ImageDigestMirrorSet
		if err := json.Unmarshal(doc, &o); err != nil {
			return nil, 0, fmt.Errorf("ImageDigestMirrorSet: %w", err)
		}
		r, err := mirrorpolicy.FromImageDigestMirrorSets(o)
		return r, 1, err
	case tm.Kind == "ImageTagMirrorSet" && group == configv1.GroupName:
		var o configv1.ImageTagMirrorSet
		if err := json.Unmarshal(doc, &o); err != nil {
			return nil, 0, fmt.Errorf("ImageTagMirrorSet: %w", err)
		}
		r, err := mirrorpolicy.FromImageTagMirrorSets(o)
		return r, 1, err
	case tm.Kind == "ImageContentSourcePolicy" && group == operatorv1alpha1.GroupName:
		var o operatorv1alpha1.ImageContentSourcePolicy
		if err := json.Unmarshal(doc, &o); err != nil {
			return nil, 0, fmt.Errorf("ImageContentSourcePolicy: %w", err)
		}
		r, err := mirrorpolicy.FromImageContentSourcePolicies(o)
		return r, 1, err
	case tm.Kind == "HostedCluster" && group == hyperv1.GroupVersion.Group:
		var o hyperv1.HostedCluster
		if err := json.Unmarshal(doc, &o); err != nil {
			return nil, 0, fmt.Errorf("HostedCluster: %w", err)
		}
		r, err := mirrorpolicy.FromImageContentSources(o.Spec.ImageContentSources)
		for i := range r {
			r[i].Origin = "HostedCluster/" + o.Name + ": " + r[i].Origin
		}
		return r, 1, err
	case tm.Kind == "":
		return nil, 0, errors.New("no kind")
	default:
		return nil, 0, fmt.Errorf("%s %s is not a mirror configuration (want ImageDigestMirrorSet, ImageTagMirrorSet, ImageContentSourcePolicy or HostedCluster)", tm.APIVersion, tm.Kind)
	}
}

// splitDocuments returns each document of data as JSON. Empty YAML
// documents are skipped.
func splitDocuments(data []byte) ([][]byte, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("empty file")
	}
	var docs [][]byte
	if trimmed[0] == '{' || trimmed[0] == '[' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
				return docs, nil
			} else if err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			if raw[0] == '[' {
				// A bare JSON array of objects.
				var items []json.RawMessage
				if err := json.Unmarshal(raw, &items); err != nil {
					return nil, fmt.Errorf("invalid JSON: %w", err)
				}
				for _, it := range items {
					docs = append(docs, it)
				}
				continue
			}
			docs = append(docs, raw)
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 1; ; i++ {
		var v any
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return docs, nil
		} else if err != nil {
			return nil, fmt.Errorf("invalid YAML in document %d: %w", i, err)
		}
		if v == nil {
			continue
		}
		j, err := json.Marshal(jsonCompatible(v))
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		docs = append(docs, j)
	}
}

// jsonCompatible turns yaml.v2's map[interface{}]interface{} into
// map[string]any, recursively, so that encoding/json accepts it.
func jsonCompatible(v any) any {
	switch t := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, val := range t {
			m[fmt.Sprint(k)] = jsonCompatible(val)
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = jsonCompatible(val)
		}
		return out
	default:
		return v
	}
}

// yamlFromJSON converts JSON to YAML keeping the key order of the JSON
// (Go struct field order), which a generic map would lose.
func yamlFromJSON(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := orderedValue(dec)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(v)
}

func orderedValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var m yaml.MapSlice
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := orderedValue(dec)
				if err != nil {
					return nil, err
				}
				m = append(m, yaml.MapItem{Key: kt, Value: v})
			}
			_, err := dec.Token() // '}'
			return m, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := orderedValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token() // ']'
			return list, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		if i, err := strconv.ParseInt(t.String(), 10, 64); err == nil {
			return i, nil
		}
		f, err := t.Float64()
		return f, err
	default:
		return t, nil // string, bool, nil
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
