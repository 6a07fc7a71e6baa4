package nodeconfig

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	yaml "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubeletconfigv1 "k8s.io/kubelet/config/v1"
)

const (
	ignitionVersion = "3.2.0"
	// dataURLPrefix is how the MCO and Butane write inline file contents.
	dataURLPrefix = "data:text/plain;charset=utf-8;base64,"
)

func (c *config) kubeletConfig() ([]byte, error) {
	// kubeletconfigv1.CredentialProviderConfig with apiVersion first, as
	// manifests are usually written.
	cfg := struct {
		APIVersion string                               `json:"apiVersion"`
		Kind       string                               `json:"kind"`
		Providers  []kubeletconfigv1.CredentialProvider `json:"providers"`
	}{
		APIVersion: kubeletConfigAPIVersion,
		Kind:       "CredentialProviderConfig",
		Providers: append([]kubeletconfigv1.CredentialProvider{{
			Name:                 path.Base(c.PluginPath),
			MatchImages:          c.matchImages,
			DefaultCacheDuration: &metav1.Duration{Duration: c.CacheDuration},
			APIVersion:           pluginAPIVersion,
			Args:                 c.PluginArgs,
			Env:                  c.env,
		}}, c.ExtraProviders...),
	}
	return toYAML(cfg)
}

// Ignition 3.2.0, only what is written here. Field order is fixed by the
// structs, so the bytes are too.
type ignitionConfig struct {
	Ignition struct {
		Version string `json:"version"`
	} `json:"ignition"`
	Storage struct {
		Files []ignitionFile `json:"files"`
	} `json:"storage"`
}

type ignitionFile struct {
	Path      string `json:"path"`
	Overwrite bool   `json:"overwrite"`
	Contents  struct {
		Source string `json:"source"`
	} `json:"contents"`
	Mode int `json:"mode"`
}

// manifest is a Kubernetes object as it is written out: only the fields
// this package sets, in a fixed order (the API types would add
// creationTimestamp: null and empty spec fields).
type manifest struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   manifestMeta      `json:"metadata"`
	Spec       *machineSpec      `json:"spec,omitempty"`
	Data       map[string]string `json:"data,omitempty"`
}

type manifestMeta struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

type machineSpec struct {
	Config json.RawMessage `json:"config"`
}

func (c *config) manifests(r *Rendered) error {
	var ign ignitionConfig
	ign.Ignition.Version = ignitionVersion
	for _, f := range r.Files {
		file := ignitionFile{Path: f.Path, Overwrite: true, Mode: f.Mode}
		file.Contents.Source = dataURLPrefix + base64.StdEncoding.EncodeToString(f.Contents)
		ign.Storage.Files = append(ign.Storage.Files, file)
	}
	var err error
	if r.Ignition, err = marshalJSON(ign); err != nil {
		return err
	}

	labels := map[string]string{RoleLabel: "worker"}
	r.MachineConfig = &mcfgv1.MachineConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Labels: labels},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: bytes.Clone(r.Ignition)}},
	}
	mcYAML, err := machineConfigYAML(r.MachineConfig)
	if err != nil {
		return err
	}
	r.ConfigMap = &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace},
		Data:       map[string]string{"config": string(mcYAML)},
	}
	return nil
}

func machineConfigYAML(mc *mcfgv1.MachineConfig) ([]byte, error) {
	return toYAML(manifest{
		APIVersion: mc.APIVersion,
		Kind:       mc.Kind,
		Metadata:   manifestMeta{Name: mc.Name, Labels: mc.Labels},
		Spec:       &machineSpec{Config: mc.Spec.Config.Raw},
	})
}

// YAML returns the ConfigMap as a YAML manifest, for NodePool.spec.config.
func (r *Rendered) YAML() ([]byte, error) {
	if r == nil || r.ConfigMap == nil {
		return nil, errors.New("nodeconfig: nothing rendered")
	}
	cm := r.ConfigMap
	return toYAML(manifest{
		APIVersion: "v1",
		Kind:       "ConfigMap",
		Metadata:   manifestMeta{Name: cm.Name, Namespace: cm.Namespace},
		Data:       cm.Data,
	})
}

func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("nodeconfig: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// toYAML writes v's JSON form as YAML, keeping the JSON field order (struct
// order, sorted map keys), so the output is deterministic.
func toYAML(v any) ([]byte, error) {
	j, err := marshalJSON(v)
	if err != nil {
		return nil, err
	}
	var doc yaml.MapSlice
	if err := yaml.Unmarshal(j, &doc); err != nil {
		return nil, fmt.Errorf("nodeconfig: %w", err)
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("nodeconfig: %w", err)
	}
	return out, nil
}
