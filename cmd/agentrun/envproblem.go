package main

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/caarlos0/env/v11"
)

// envProblem turns the environment parser's error into a usage error that names each
// bad variable, its value (unless it is a secret) and what it must be, instead of the
// Go field and the strconv error.
func envProblem(err error, vars map[string]string) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return usagef("environment: %v", err)
	}
	var msgs []string
	for _, e := range agg.Errors {
		var pe env.ParseError
		if !errors.As(e, &pe) {
			msgs = append(msgs, e.Error())
			continue
		}
		name := envVarName(reflect.TypeFor[envConfig](), "", pe.Name)
		if name == "" {
			msgs = append(msgs, e.Error())
			continue
		}
		value := fmt.Sprintf(" %q", vars[name])
		if slices.Contains(secretEnv, name) {
			value = ""
		}
		msgs = append(msgs, fmt.Sprintf("%s%s: want %s", name, value, typeWord(pe.Type)))
	}
	return usagef("environment: %s", strings.Join(msgs, "; "))
}

// envVarName returns the variable of the field named field in t (or a struct field of
// t with an envPrefix), "" when there is none.
func envVarName(t reflect.Type, prefix, field string) string {
	for i := range t.NumField() {
		f := t.Field(i)
		if p, ok := f.Tag.Lookup("envPrefix"); ok && f.Type.Kind() == reflect.Struct {
			if name := envVarName(f.Type, prefix+p, field); name != "" {
				return name
			}
			continue
		}
		if f.Name == field {
			if tag := f.Tag.Get("env"); tag != "" {
				return prefix + strings.Split(tag, ",")[0]
			}
		}
	}
	return ""
}

// typeWord says what a value of type t looks like.
func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Bool:
		return "true or false"
	default:
		return "a " + t.String()
	}
}
