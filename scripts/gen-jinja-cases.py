#!/usr/bin/env python3
"""Writes the reference fixtures for the C++ Jinja engine (core/jinja), rendered by Python's
Jinja2 configured exactly as transformers' `_compile_jinja_template` configures it
(ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols, a no-op
{% generation %} block, transformers' `tojson`, `raise_exception`, and `strftime_now` pinned
to 2025-06-15 00:00:00 so the renders do not change):

  tests/fixtures/jinja/cases.json           small templates, one language feature each, with
                                            the expected output (or "error": true)
  tests/fixtures/jinja/real_templates.json  every models/templates/*.jinja of a llama.cpp git
                                            mirror, rendered on a fixed set of conversations

Needs only python3 and jinja2 (the fixtures were written with Jinja2 3.1.6). Run from anywhere:

  python3 scripts/gen-jinja-cases.py [--repo /work/.mirror/kmbandy+llama.cpp/repo] [--out DIR]

The output is deterministic (run it twice, compare the bytes)."""
import argparse
import datetime
import json
import os
import subprocess
import sys

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.sandbox

PINNED_DATETIME = datetime.datetime(2025, 6, 15, 0, 0, 0)
SPECIAL_TOKENS = {"bos_token": "<|bos|>", "eos_token": "<|eos|>", "pad_token": "<|pad|>",
                  "unk_token": "<|unk|>"}


class GenerationExtension(jinja2.ext.Extension):
    """transformers' AssistantTracker with tracking off: {% generation %}body{% endgeneration %}
    renders the body."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_generation_support"), [], [],
                                      body).set_lineno(lineno)

    def _generation_support(self, caller):
        return caller()


def make_env():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(format):
        return PINNED_DATETIME.strftime(format)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[GenerationExtension, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


ENV = make_env()


def render(template, context):
    """(output, None) or (None, error message). The context goes through JSON first, so what
    is rendered is exactly what the fixture holds."""
    context = json.loads(json.dumps(context, ensure_ascii=False))
    try:
        return ENV.from_string(template).render(**context), None
    except Exception as e:  # noqa: BLE001 - any failure is an expected-error outcome
        return None, f"{type(e).__name__}: {e}"


# ---------------------------------------------------------------------------------------------
# Small cases: (name, template, context). Each targets one feature.

MSGS = [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"}, {"role": "user", "content": "bye"}]
PEOPLE = [{"name": "bob", "age": 30, "admin": True}, {"name": "Al", "age": 25, "admin": False},
          {"name": "cy", "age": 35}]
UNI = "héllo wörld 👍"

CASES = [
    # --- text and whitespace control
    ("text_plain", "hello world", {}),
    ("text_trailing_newline_dropped", "x\n", {}),
    ("text_two_trailing_newlines", "x\n\n", {}),
    ("text_crlf_normalized", "a\r\nb", {}),
    ("ws_trim_blocks_if", "{% if true %}\nyes\n{% endif %}\nafter", {}),
    ("ws_lstrip_blocks", "  {% if true %}\n  yes\n  {% endif %}\nend", {}),
    ("ws_lstrip_blocks_not_after_text", "a  {% if true %}b{% endif %}", {}),
    ("ws_lstrip_blocks_plus", "  {%+ if true %}x{% endif %}", {}),
    ("ws_trim_blocks_plus", "{% if true +%}\nx{% endif %}", {}),
    ("ws_dash_left", "a  \n  {%- if true %}b{% endif %}", {}),
    ("ws_dash_right", "{% if true -%}  \n  b{% endif %}", {}),
    ("ws_dash_both_for", "[\n{%- for x in [1, 2] -%}\n  {{ x }}\n{%- endfor -%}\n]", {}),
    ("ws_expr_dash", "a  {{- 'x' -}}  \n b", {}),
    ("ws_expr_no_trim_blocks", "{{ 'x' }}\n{{ 'y' }}\nz", {}),
    ("ws_for_lines", "{% for x in xs %}\n{{ x }}\n{% endfor %}\nend", {"xs": [1, 2]}),
    ("ws_block_after_text_keeps_newline", "a{% if true %}\nb{% endif %}", {}),
    ("comment_plain", "a {# c #} b", {}),
    ("comment_dash", "a {#- c -#} b", {}),
    ("comment_trim_blocks", "{# c #}\nx", {}),
    ("comment_multiline", "a{#\n {{ x }} {% if %}\n#}b", {}),
    ("raw_block", "{% raw %}{{ x }} {% if %}{% endraw %}", {}),
    ("raw_block_dash", "a {%- raw -%} {{ x }} {%- endraw -%} b", {}),

    # --- literals and expressions
    ("lit_float", "{{ 1.5 }} {{ 1.0 }} {{ -0.25 }}", {}),
    ("lit_float_exp", "{{ 1e20 }} {{ 2.5e-3 }}", {}),
    ("lit_string_escapes", r"""{{ 'a\nb' }}|{{ "q\"q" }}|{{ 'it\'s' }}|{{ 'tab\tx' }}|{{ 'back\\slash' }}""", {}),
    ("lit_string_unicode_escape", r"{{ '\u00e9' }}{{ 'caf\u00e9' }}", {}),
    ("lit_string_raw_unicode", "{{ 'é世👍' }}", {}),
    ("lit_list", "{{ [1, 'a', none, true] }}", {}),
    ("lit_dict", "{{ {'a': 1} }}", {}),
    ("lit_nested", "{{ {'a': [1, {'b': 'c'}], 'd': none} }}", {}),
    ("lit_tuple", "{{ (1, 'x') }}", {}),
    ("lit_bool_case", "{{ true }} {{ True }} {{ false }} {{ none }} {{ None }}", {}),
    ("arith_mul", "{{ 3 * 4 }} {{ 3 * 1.0 }}", {}),
    ("arith_div", "{{ 10 / 4 }} {{ 10 / 5 }}", {}),
    ("arith_floordiv", "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7.5 // 2 }}", {}),
    ("arith_mod", "{{ 7 % 3 }} {{ -7 % 3 }} {{ 7.5 % 2 }}", {}),
    ("arith_pow", "{{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2.0 ** 2 }}", {}),
    ("arith_pow_left_assoc", "{{ 2 ** 3 ** 2 }}", {}),
    ("arith_int_float_mix", "{{ 1 + 2.5 }} {{ 1 + 1.0 }} {{ 3 - 0.5 }}", {}),
    ("arith_float_repr", "{{ 0.1 + 0.2 }} {{ 1 / 3 }}", {}),
    ("arith_precedence", "{{ 2 + 3 * 4 }} {{ (2 + 3) * 4 }} {{ 10 - 2 - 3 }} {{ 10 // 3 * 3 }}", {}),
    ("arith_unary_minus_pow", "{{ -2 ** 2 }}", {}),
    ("string_times_int", "{{ 'ab' * 3 }}|{{ '-' * 0 }}|{{ 2 * 'x' }}", {}),
    ("list_plus", "{{ [1] + [2, 3] }}", {}),
    ("tilde_concat", "{{ 1 ~ 'a' ~ 2.5 }}", {}),
    ("tilde_none_bool", "{{ 'x' ~ none ~ true }}", {}),
    ("tilde_undefined", "[{{ 'x' ~ missing }}]", {}),
    ("cmp_numbers", "{{ 1 < 2 }} {{ 2 <= 2 }} {{ 3 > 4 }} {{ 3 >= 4 }} {{ 1 == 1.0 }} {{ 1 != 2 }}", {}),
    ("cmp_strings", "{{ 'abc' < 'abd' }} {{ 'B' < 'a' }} {{ 'é' > 'z' }} {{ 'a' == 'a' }}", {}),
    ("cmp_chained", "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }}", {}),
    ("cmp_lists_none", "{{ [1, 2] == [1, 2] }} {{ none == none }} {{ 'a' == none }} {{ {'a': 1} == {'a': 1} }}", {}),
    ("logic_or_value", "{{ 0 or 'x' }}|{{ '' or [] }}|{{ none or 0 }}|{{ 'a' or 'b' }}", {}),
    ("logic_and_value", "{{ 'a' and 'b' }}|{{ 0 and 'b' }}|{{ [] and 1 }}", {}),
    ("logic_not", "{{ not '' }} {{ not 'a' }} {{ not none }} {{ not [] }}", {}),
    ("logic_precedence", "{{ not 1 and 0 }} {{ true or false and false }} {{ not false or false }}", {}),
    ("logic_short_circuit_and", "{{ false and 1 / 0 }}", {}),
    ("logic_short_circuit_or", "{{ true or 1 / 0 }}", {}),
    ("in_string", "{{ 'b' in 'abc' }} {{ 'é' in 'café' }} {{ '' in 'x' }} {{ 'z' not in 'abc' }}", {}),
    ("in_list", "{{ 2 in [1, 2] }} {{ 'x' in ['a'] }} {{ 3 not in [1] }}", {}),
    ("in_dict", "{{ 'k' in {'k': 1} }} {{ 1 in {'k': 1} }}", {}),
    ("not_in_prefix", "{{ not 'a' in 'abc' }}", {}),
    ("ternary", "{{ 'y' if true else 'n' }} {{ 'y' if 0 else 'n' }}", {}),
    ("ternary_no_else", "[{{ 'y' if false }}][{{ 'y' if true }}]", {}),
    ("ternary_nested", "{{ 'a' if x == 1 else 'b' if x == 2 else 'c' }}", {"x": 2}),
    ("filter_vs_unary_minus", "{{ -x|abs }} {{ 1 + xs|length }} {{ 2 * xs|length }}", {"x": 3, "xs": [1, 2, 3]}),
    ("filter_vs_div", "{{ 7 / 2|int }} {{ (7 / 2)|int }}", {}),
    ("filter_on_literal_neg", "{{ -3|abs }} {{ (-3)|abs }}", {}),
    ("filter_then_plus", "{{ 'abc'|upper + 'd' }}", {}),
    ("method_on_filter_result", "{{ (x|string).upper() }}", {"x": "ab"}),
    ("multiline_expression", "{{\n  'a'\n  ~ 'b'\n}}", {}),

    # --- attribute and subscript access
    ("attr_dict_dot_subscript", "{{ d.a }} {{ d['a'] }} {{ d[\"a\"] }}", {"d": {"a": 1}}),
    ("attr_nested", "{{ m.tool_calls[0].function.name }}", {"m": {"tool_calls": [{"function": {"name": "f"}}]}}),
    ("attr_missing_key", "[{{ d.zz }}][{{ d['zz'] }}]", {"d": {"a": 1}}),
    ("attr_missing_is_defined", "{{ d.zz is defined }} {{ d.a is defined }}", {"d": {"a": 1}}),
    ("attr_subscript_prefers_key", "{{ d['items'] }} {{ d['keys'] }}", {"d": {"items": 1, "keys": 2}}),
    ("attr_int_dot", "{{ xs.0 }} {{ xs.1 }}", {"xs": ["a", "b"]}),
    ("attr_none_attr", "[{{ none.x }}]", {}),
    ("attr_none_value_attr", "[{{ d.a.b }}]", {"d": {"a": None}}),
    ("list_index", "{{ xs[0] }} {{ xs[-1] }} {{ xs[-2] }}", {"xs": [1, 2, 3]}),
    ("list_index_out_of_range", "[{{ xs[10] }}] {{ xs[10] is defined }}", {"xs": [1]}),
    ("list_slices", "{{ xs[::-1] }} {{ xs[1:] }} {{ xs[:-1] }} {{ xs[1:3:2] }} {{ xs[5:] }}", {"xs": [1, 2, 3, 4]}),
    ("string_index", "{{ s[0] }} {{ s[1] }} {{ s[-1] }}", {"s": UNI}),
    ("string_slices", "{{ s[::-1] }}|{{ s[1:] }}|{{ s[:-1] }}|{{ s[1:3:2] }}|{{ s[2:5] }}|{{ s[50:] }}", {"s": UNI}),
    ("messages_slice_loop", "{% for m in messages[1:] %}{{ m.role }} {% endfor %}", {"messages": MSGS}),

    # --- output of values
    ("out_floats", "{{ 1.0 }} {{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} {{ 0.00001 }} {{ 123456789.125 }}", {}),
    ("out_context_float", "{{ x }} {{ y }} {{ z }}", {"x": 3.0, "y": 0.5, "z": -2.75}),
    ("out_list_repr", "{{ [1, 'a', none, true, 2.0] }}", {}),
    ("out_list_repr_quotes", "{{ [\"it's\", 'a\"b', 'x\\ny', 'é'] }}", {}),
    ("out_dict_repr", "{{ {'a': 1, 'b': [true, none], 'c': {'d': 'e'}} }}", {}),
    ("out_unicode_var", "{{ s }}", {"s": "  こんにちは 👩‍👩‍👧 مرحبا\t\n"}),

    # --- if / elif / else
    ("if_elif", "{% for x in [1, 2, 3] %}{% if x == 1 %}a{% elif x == 2 %}b{% else %}c{% endif %}{% endfor %}", {}),
    ("if_truthiness", "{% for v in vals %}{% if v %}T{% else %}F{% endif %}{% endfor %}", {"vals": [[], {}, "", 0, 0.0, "false", None, [0], " ", 1]}),
    ("if_undefined_falsy", "{% if missing %}T{% else %}F{% endif %}", {}),
    ("if_defined_and_true", "{% if x is defined and x %}T{% else %}F{% endif %}", {"x": "y"}),
    ("if_defined_and_false", "{% if x is defined and x %}T{% else %}F{% endif %}", {"x": False}),
    ("if_tools_none_vs_empty", "{% if a %}A{% endif %}{% if b %}B{% endif %}{% if a is none %}N{% endif %}", {"a": None, "b": []}),

    # --- for loops
    ("for_loop_vars", "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }} {% endfor %}", {}),
    ("for_previtem_nextitem", "{% for x in [1, 2, 3] %}[{{ loop.previtem }}|{{ loop.nextitem }}]{% endfor %}", {}),
    ("for_cycle", "{% for x in range(5) %}{{ loop.cycle('a', 'b', 'c') }}{% endfor %}", {}),
    ("for_else_empty", "{% for x in [] %}{{ x }}{% else %}empty{% endfor %}", {}),
    ("for_dict_keys", "{% for k in d %}{{ k }};{% endfor %}", {"d": {"b": 1, "a": 2, "c": 3}}),
    ("for_dict_items", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", {"d": {"b": 1, "a": 2}}),
    ("for_dict_keys_values", "{% for k in d.keys() %}{{ k }}{% endfor %}|{% for v in d.values() %}{{ v }}{% endfor %}", {"d": {"b": 1, "a": 2}}),
    ("for_tuple_unpack_list", "{% for a, b in [[1, 2], [3, 4]] %}{{ a }}{{ b }};{% endfor %}", {}),
    ("for_string_chars", "{% for ch in s %}[{{ ch }}]{% endfor %}", {"s": "aé👍"}),
    ("for_filter_if", "{% for x in xs if x % 2 %}{{ x }}:{{ loop.index }}:{{ loop.last }} {% endfor %}", {"xs": [1, 2, 3, 4, 5, 6]}),
    ("for_filter_if_messages", "{% for m in messages if m.role != 'system' %}{{ loop.index0 }}{{ m.role[0] }}{% endfor %}", {"messages": MSGS}),
    ("for_break", "{% for x in range(10) %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("for_continue", "{% for x in range(6) %}{% if x is odd %}{% continue %}{% endif %}{{ x }}{% endfor %}", {}),
    ("for_nested_outer_loop", "{% for a in [1, 2] %}{% set outer = loop.index %}{% for b in 'xy' %}{{ outer }}{{ loop.index }} {% endfor %}{% endfor %}", {}),
    ("for_undefined_iterable", "[{% for x in missing %}{{ x }}{% endfor %}]", {}),
    ("global_range", "{% for i in range(3) %}{{ i }}{% endfor %}|{% for i in range(2, 5) %}{{ i }}{% endfor %}|{% for i in range(0, 10, 3) %}{{ i }}{% endfor %}|{% for i in range(5, 0, -2) %}{{ i }}{% endfor %}", {}),
    ("for_range_len", "{{ range(4)|length }} {{ range(1, 4)|list }}", {}),
    ("for_reversed_messages", "{% for m in messages[::-1] %}{{ m.role[0] }}{% endfor %}", {"messages": MSGS}),
    ("for_loop_index_alternation", "{% for m in messages %}{% if (m.role == 'user') != (loop.index0 % 2 == 1) %}X{% else %}.{% endif %}{% endfor %}", {"messages": MSGS}),
    ("for_join_comma", "{% for x in xs %}{{ x }}{% if not loop.last %}, {% endif %}{% endfor %}", {"xs": ["a", "b", "c"]}),

    # --- set and scoping
    ("set_tuple_unpack", "{% set a, b = 1, 'two' %}{{ a }}{{ b }}", {}),
    ("set_block", "{% set x %}a{{ 1 + 1 }}\nb{% endset %}[{{ x }}]", {}),
    ("set_block_trim", "{%- set x -%}\n  body  \n{%- endset -%}\n[{{ x }}]", {}),
    ("set_block_filter", "{% set x | upper %}abc{% endset %}{{ x }}", {}),
    ("scope_for_does_not_leak", "{% set x = 1 %}{% for i in [5, 6] %}{% set x = i %}{{ x }}{% endfor %}|{{ x }}", {}),
    ("scope_for_new_var_not_leak", "{% for i in [5, 6] %}{% set y = i %}{% endfor %}[{{ y }}]", {}),
    ("scope_if_leaks", "{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}", {}),
    ("scope_set_in_iteration", "{% for i in [1, 2] %}{% if i == 1 %}{% set y = 'a' %}{% endif %}[{{ y }}]{% endfor %}", {}),
    ("scope_loop_var_not_leak", "{% for i in [1, 2] %}{% endfor %}[{{ i }}]", {}),
    ("namespace_basic", "{% set ns = namespace(found=false) %}{% for x in [1, 2, 3] %}{% if x == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }}", {}),
    ("namespace_counter", "{% set ns = namespace(n=0, s='') %}{% for x in 'abc' %}{% set ns.n = ns.n + 1 %}{% set ns.s = ns.s ~ x %}{% endfor %}{{ ns.n }} {{ ns.s }}", {}),
    ("namespace_new_attr", "{% set ns = namespace() %}{% set ns.a = 'x' %}{{ ns.a }}[{{ ns.zz }}]", {}),
    ("namespace_last_user_index", "{% set ns = namespace(last=-1) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.last = loop.index0 %}{% endif %}{% endfor %}{{ ns.last }}", {"messages": MSGS}),
    ("with_block", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]", {}),

    # --- macros
    ("macro_defaults", "{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('Bob') }}|{{ greet('Al', 'Hi') }}", {}),
    ("macro_kwargs", "{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet(greeting='Yo', name='Z') }}", {}),
    ("macro_missing_arg", "{% macro m(a, b) %}[{{ a }}][{{ b }}]{% endmacro %}{{ m(1) }}", {}),
    ("macro_in_expression", "{% macro m(x) %}<{{ x }}>{% endmacro %}{{ m('a') ~ '!' }} {{ m('b')|upper }} {{ m('c')|length }}", {}),
    ("macro_whitespace", "{% macro m(x) %}\n  {{ x }}\n{% endmacro %}[{{ m(1) }}][{{ m(2)|trim }}]", {}),
    ("macro_recursive", "{% macro r(v) %}{% if v is mapping %}{{ '{' }}{% for k, x in v.items() %}{{ k }}:{{ r(x) }};{% endfor %}{{ '}' }}{% else %}{{ v }}{% endif %}{% endmacro %}{{ r(d) }}", {"d": {"a": 1, "b": {"c": 2}}}),
    ("macro_sees_context", "{% macro m() %}{{ g }}{% endmacro %}{{ m() }}", {"g": "ctx"}),
    ("macro_sees_top_set", "{% set g = 5 %}{% macro m() %}{{ g }}{% endmacro %}{{ m() }}", {}),
    ("macro_set_does_not_leak", "{% set x = 1 %}{% macro m() %}{% set x = 2 %}{{ x }}{% endmacro %}{{ m() }}{{ x }}", {}),
    ("macro_namespace_arg", "{% macro inc(ns) %}{% set ns.n = ns.n + 1 %}{% endmacro %}{% set ns = namespace(n=0) %}{{ inc(ns) }}{{ inc(ns) }}{{ ns.n }}", {}),
    ("macro_is_callable", "{% macro m() %}{% endmacro %}{{ m is callable }} {{ 'x' is callable }}", {}),
    ("call_block", "{% macro wrap() %}[{{ caller() }}]{% endmacro %}{% call wrap() %}inner{% endcall %}", {}),
    ("filter_block", "{% filter upper %}abc {{ 'd' }}{% endfilter %}", {}),
    ("filter_block_trim", "{%- filter trim -%}\n  body text  \n{%- endfilter -%}|", {}),
    ("generation_block", "a{% generation %}b{{ 1 }}{% endgeneration %}c", {}),

    # --- tojson
    ("tojson_plain", "{{ d|tojson }}", {"d": {"b": 1, "a": [1, 2.5, True, None, "é"]}}),
    ("tojson_scalars", "{{ 1|tojson }} {{ 1.0|tojson }} {{ 1e20|tojson }} {{ 0.1|tojson }} {{ true|tojson }} {{ none|tojson }} {{ 'x'|tojson }}", {}),
    ("tojson_string_escapes", "{{ s|tojson }}", {"s": "it's \"q\"\n\t\r\\ \u0001\u001f\u007f é 👍 </script> & <"}),
    ("tojson_non_ascii", "{{ d|tojson }}", {"d": {"城市": "東京", "emoji": "👩‍👩‍👧"}}),
    ("tojson_ensure_ascii", "{{ s|tojson(ensure_ascii=true) }}", {"s": "é世👍"}),
    ("tojson_indent2", "{{ d|tojson(indent=2) }}", {"d": {"a": [1, {"b": None}], "c": {}, "e": []}}),
    ("tojson_indent4", "{{ d|tojson(indent=4) }}", {"d": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}}),
    ("tojson_separators", "{{ d|tojson(separators=(',', ':')) }}", {"d": {"a": [1, 2], "b": "c"}}),
    ("tojson_sort_keys", "{{ d|tojson(sort_keys=true) }}", {"d": {"b": 1, "a": {"d": 1, "c": 2}}}),
    ("tojson_empty", "{{ []|tojson }} {{ {}|tojson }} {{ ''|tojson }}", {}),
    ("tojson_in_attr", "{{ m.tool_calls[0].function.arguments|tojson }}", {"m": {"tool_calls": [{"function": {"arguments": {"city": "Paris", "n": 2}}}]}}),
    ("tojson_large_float", "{{ d|tojson }}", {"d": [1.5e-7, 3.0, 100.0, 1e300]}),

    # --- string filters
    ("filter_trim", "[{{ '  x y \n'|trim }}][{{ 'xxhixx'|trim('x') }}]", {}),
    ("filter_trim_unicode_ws", "[{{ s|trim }}]", {"s": "\u00a0\u3000 hi\t\n"}),
    ("filter_upper_lower", "{{ 'aBc'|upper }} {{ 'aBc'|lower }} {{ 'Ça Va é'|upper }} {{ 'ÀÉ'|lower }}", {}),
    ("filter_capitalize_title", "{{ 'hELLO wORLD'|capitalize }} {{ 'hello wORLD-foo bar'|title }}", {}),
    ("filter_replace", "{{ 'aaa'|replace('a', 'b') }} {{ 'aaa'|replace('a', 'b', 2) }} {{ 'a.b'|replace('.', '') }}", {}),
    ("filter_length", "{{ [1, 2]|length }} {{ 'abc'|length }} {{ {'a': 1}|length }} {{ s|length }} {{ missing|length }}", {"s": UNI}),
    ("filter_first_last", "{{ xs|first }} {{ xs|last }} {{ 'abc'|first }} {{ 'abc'|last }} [{{ []|first }}]", {"xs": [1, 2, 3]}),
    ("filter_join", "{{ xs|join }}|{{ xs|join(', ') }}|{{ [1, 2]|join('-') }}", {"xs": ["a", "b"]}),
    ("filter_join_attribute", "{{ people|join(', ', attribute='name') }}", {"people": PEOPLE}),
    ("filter_default", "{{ missing|default('x') }} {{ missing|d('y') }} {{ v|default('z') }} {{ d.zz|default('w') }}", {"v": "set", "d": {}}),
    ("filter_default_none", "{{ n|default('x') }}|{{ e|default('x') }}", {"n": None, "e": ""}),
    ("filter_default_boolean", "{{ n|default('x', true) }}|{{ e|d('x', true) }}|{{ z|default('x', boolean=true) }}", {"n": None, "e": "", "z": 0}),
    ("filter_list", "{{ 'abc'|list }} {{ d|list }}", {"d": {"a": 1, "b": 2}}),
    ("filter_string", "{{ 1|string ~ 'a' }} {{ [1]|string }} {{ none|string }} {{ true|string }}", {}),
    ("filter_int_float", "{{ '2.5'|float }} {{ 3|float }} {{ 'x'|float }} {{ '42'|int }} {{ '3.9'|int }} {{ 3.9|int }} {{ 'abc'|int }} {{ 'abc'|int(5) }} {{ ' 7 '|int }}", {}),
    ("filter_round", "{{ 2.567|round(2) }} {{ 2.1|round }} {{ 2.1|round(0, 'ceil') }} {{ 2.9|round(method='floor') }} {{ 2.56|round(1, 'floor') }}", {}),
    ("filter_items", "{% for k, v in d|items %}{{ k }}{{ v }}{% endfor %}", {"d": {"z": 1, "a": 2}}),
    ("filter_dictsort", "{% for k, v in d|dictsort %}{{ k }}{{ v }} {% endfor %}", {"d": {"b": 1, "A": 3, "a": 2}}),
    ("filter_dictsort_by_value", "{% for k, v in d|dictsort(by='value') %}{{ k }} {% endfor %}|{% for k, v in d|dictsort(reverse=true) %}{{ k }} {% endfor %}", {"d": {"b": 1, "c": 3, "a": 2}}),
    ("filter_sort", "{{ [3, 1, 2]|sort }} {{ [3, 1, 2]|sort(reverse=true) }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }}", {}),
    ("filter_sort_attribute", "{{ people|sort(attribute='age')|map(attribute='name')|join(',') }}", {"people": PEOPLE}),
    ("filter_unique", "{{ [1, 2, 1, 3, 2]|unique|list }} {{ ['a', 'A', 'b']|unique|list }}", {}),
    ("filter_map_attribute", "{{ people|map(attribute='name')|list }}", {"people": PEOPLE}),
    ("filter_map_filter", "{{ ['a', 'b']|map('upper')|join }} {{ [1, 2]|map('string')|join('+') }}", {}),
    ("filter_select", "{{ [1, 2, 3, 4]|select('odd')|list }} {{ [0, 1, '', 'a', none]|select|list }}", {}),
    ("filter_select_arg", "{{ [1, 2, 3, 2]|select('equalto', 2)|list }} {{ [1, 5, 9]|select('gt', 4)|list }}", {}),
    ("filter_reject", "{{ [1, 2, 3, 4]|reject('odd')|list }} {{ ['a', 1, 'b']|reject('string')|list }}", {}),
    ("filter_selectattr_equalto", "{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(',') }}", {"messages": MSGS}),
    ("filter_selectattr_eq_len", "{{ messages|selectattr('role', 'eq', 'user')|list|length }}", {"messages": MSGS}),
    ("filter_selectattr_truthy", "{{ people|selectattr('admin')|map(attribute='name')|join }}", {"people": PEOPLE}),
    ("filter_selectattr_defined", "{{ people|selectattr('admin', 'defined')|list|length }} {{ people|selectattr('admin', 'undefined')|map(attribute='name')|join }}", {"people": PEOPLE}),
    ("filter_rejectattr", "{{ messages|rejectattr('role', 'equalto', 'system')|map(attribute='role')|join(',') }}", {"messages": MSGS}),
    ("filter_selectattr_first", "{{ (messages|selectattr('role', 'equalto', 'assistant')|first).content }}", {"messages": MSGS}),
    ("filter_indent", "[{{ 'a\nb\n\nc'|indent(2) }}][{{ 'a\nb'|indent }}]", {}),
    ("filter_indent_first", "[{{ 'a\nb'|indent(2, true) }}][{{ 'a\n\nb'|indent(4, first=true, blank=true) }}]", {}),
    ("filter_safe", "{{ '<b>&'|safe }}", {}),
    ("filter_reverse", "{{ [1, 2, 3]|reverse|list }} {{ 'abé'|reverse }}", {}),
    ("filter_sum", "{{ [1, 2, 3]|sum }} {{ [1, 2.5]|sum }} {{ people|sum(attribute='age') }} {{ [1]|sum(start=10) }}", {"people": PEOPLE}),
    ("filter_min_max", "{{ [3, 1, 2]|min }} {{ [3, 1, 2]|max }} {{ ['b', 'A']|max }} {{ (people|min(attribute='age')).name }}", {"people": PEOPLE}),
    ("filter_format", "{{ '%s-%d'|format('a', 3) }}", {}),

    # --- tests
    ("test_defined", "{{ x is defined }} {{ missing is defined }} {{ missing is undefined }} {{ n is defined }}", {"x": 1, "n": None}),
    ("test_none", "{{ n is none }} {{ 0 is none }} {{ missing is none }} {{ n is not none }}", {"n": None}),
    ("test_string", "{{ 'a' is string }} {{ 1 is string }} {{ none is string }} {{ [] is string }}", {}),
    ("test_number_integer_float", "{{ 1 is number }} {{ 1.5 is number }} {{ '1' is number }} {{ 1 is integer }} {{ 1.0 is integer }} {{ 1.0 is float }} {{ 1 is float }}", {}),
    ("test_boolean", "{{ true is boolean }} {{ 1 is boolean }} {{ b is boolean }}", {"b": False}),
    ("test_true_false", "{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ none is false }}", {}),
    ("test_mapping", "{{ d is mapping }} {{ xs is mapping }} {{ 's' is mapping }}", {"d": {}, "xs": []}),
    ("test_iterable", "{{ xs is iterable }} {{ 's' is iterable }} {{ d is iterable }} {{ 1 is iterable }} {{ none is iterable }}", {"d": {}, "xs": []}),
    ("test_sequence", "{{ xs is sequence }} {{ 's' is sequence }} {{ d is sequence }} {{ 1 is sequence }}", {"d": {}, "xs": []}),
    ("test_content_string_or_list", "{% for m in ms %}{% if m.content is string %}S{% elif m.content is iterable %}I{% endif %}{% endfor %}", {"ms": [{"content": "x"}, {"content": [{"type": "text", "text": "y"}]}]}),
    ("test_odd_even_divisibleby", "{{ 3 is odd }} {{ 3 is even }} {{ 0 is even }} {{ 9 is divisibleby(3) }} {{ 10 is divisibleby 3 }}", {}),
    ("test_equalto", "{{ 2 is equalto(2) }} {{ 2 is eq 3 }} {{ 2 is ne 3 }}", {}),
    ("test_compare", "{{ 1 is lt 2 }} {{ 1 is gt 2 }} {{ 2 is ge 2 }} {{ 3 is le 2 }} {{ 1 is lessthan 2 }} {{ 1 is greaterthan 2 }}", {}),
    ("test_in", "{{ 1 is in [1, 2] }} {{ 'x' is in 'abc' }}", {}),
    ("test_sameas", "{{ n is sameas none }} {{ true is sameas true }} {{ 1 is sameas true }}", {"n": None}),
    ("test_is_not", "{{ 1 is not string }} {{ not 1 is string }} {{ 'a' is not none }}", {}),

    # --- string methods
    ("str_startswith_endswith", "{{ s.startswith('hé') }} {{ s.endswith('👍') }} {{ s.startswith('x') }}", {"s": UNI}),
    ("str_strip", "[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}]", {"s": " \n\t a b \n "}),
    ("str_strip_chars", "[{{ '<<x>>'.strip('<>') }}][{{ '\\n\\nx\\n'.lstrip('\\n') }}][{{ 'x\\n\\n'.rstrip('\\n') }}]", {}),
    ("str_split_noarg", "{{ '  a  b\tc\n'.split() }}", {}),
    ("str_split_sep", "{{ 'a,b,,c'.split(',') }} {{ 'a,b,c'.split(',', 1) }} {{ ''.split(',') }} {{ 'a.b.c'.rsplit('.', 1) }}", {}),
    ("str_split_think", "[{{ c.split('</think>')[-1].lstrip('\\n') }}][{{ c.split('</think>')[0].split('<think>')[-1].strip('\\n') }}]", {"c": "<think>\nreason\n</think>\n\nanswer"}),
    ("str_case_methods", "{{ 'aBc'.upper() }} {{ 'aBc'.lower() }} {{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }}", {}),
    ("str_replace_method", "{{ 'a-b-c'.replace('-', '+') }} {{ 'a-b-c'.replace('-', '', 1) }}", {}),
    ("str_find_count", "{{ 'abcabc'.find('c') }} {{ 'abc'.find('z') }} {{ 'abcabc'.count('b') }} {{ 'aé👍'.find('👍') }}", {}),
    ("str_join_method", "{{ ', '.join(xs) }}|{{ ''.join(['a', 'b']) }}", {"xs": ["x", "y"]}),
    ("str_format_method", "{{ '{} is {}'.format('a', 1) }} {{ '{name}!'.format(name='n') }}", {}),
    ("str_percent_format", "{{ '%s-%s' % ('a', 1) }} {{ '%d items' % 3 }} {{ 'x=%s' % x }}", {"x": "v"}),
    ("str_splitlines", "{{ 'a\\nb\\r\\nc'.splitlines() }}", {}),
    ("str_is_methods", "{{ '123'.isdigit() }} {{ '12a'.isdigit() }} {{ 'abc'.isalpha() }} {{ ' '.isspace() }}", {}),
    ("str_in_loop_content", "{% for m in messages %}{% if '<think>' in m.content %}T{% else %}-{% endif %}{% endfor %}", {"messages": [{"content": "a<think>b"}, {"content": "c"}]}),

    # --- dict and list methods
    ("dict_get", "{{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 'dflt') }} {{ d.get('z', none) is none }}", {"d": {"a": 1}}),
    ("dict_keys_in", "{{ 'a' in d.keys() }} {{ 'a' in d }} {{ d.keys()|list }} {{ d.values()|list }}", {"d": {"a": 1, "b": 2}}),
    ("list_index_method", "{{ xs.index('b') }} {{ xs.count('a') }}", {"xs": ["a", "b", "a"]}),
    ("dict_builtin", "{{ dict(a=1, b='x')|tojson }} {{ dict(a=1).a }}", {}),

    # --- globals
    ("global_strftime_ymd", "{{ strftime_now('%Y-%m-%d') }}", {}),
    ("global_strftime_dby", "{{ strftime_now('%d %b %Y') }}", {}),
    ("global_strftime_full", "{{ strftime_now('%B %d, %Y %H:%M %A') }}", {}),
    ("global_namespace_kwargs", "{% set ns = namespace(a=1, b='two', c=[3]) %}{{ ns.a }}{{ ns.b }}{{ ns.c[0] }}", {}),
    ("global_special_tokens", "{{ bos_token }}x{{ eos_token }}", {"bos_token": "<s>", "eos_token": "</s>"}),

    # --- errors
    ("err_raise_exception", "{{ raise_exception('Conversation roles must alternate') }}", {}),
    ("err_int_div_zero", "{{ 1 // 0 }}", {}),
    ("err_undefined_attr_chain", "{{ a.b.c }}", {}),
    ("err_undefined_attr", "{{ a.b }}", {}),
    ("err_missing_key_then_attr", "{{ d.zz.y }}", {"d": {}}),
    ("err_call_undefined", "{{ nosuchfn() }}", {}),
    ("err_list_append", "{% set xs = [] %}{% set _ = xs.append(1) %}{{ xs }}", {}),
    ("err_list_pop", "{% set xs = [1] %}{{ xs.pop() }}", {}),
    ("err_dict_update", "{% set d = {} %}{{ d.update({'a': 1}) }}", {}),
    ("err_add_int_str", "{{ 1 + 'a' }}", {}),
    ("err_for_over_none", "{% for t in tools %}{{ t }}{% endfor %}", {"tools": None}),
    ("err_in_none", "{{ 'x' in none }}", {}),
    ("err_unknown_filter", "{{ 'x'|nosuchfilter }}", {}),
    ("err_unknown_test", "{{ 'x' is nosuchtest }}", {}),
    ("err_syntax_unclosed", "{% if true %}x", {}),
    ("err_syntax_endfor_mismatch", "{% for x in xs %}{% endif %}", {}),
    ("err_do_tag_not_enabled", "{% do xs.append(1) %}", {}),
    ("err_macro_too_many_args", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}", {}),
    ("err_tojson_undefined", "{{ missing|tojson }}", {}),
    ("err_str_index_not_found", "{{ 'abc'.index('z') }}", {}),
    ("err_unpack_count", "{% for a, b in [[1, 2, 3]] %}{{ a }}{% endfor %}", {}),
    ("err_unary_minus_binds_before_filter", "{{ -xs|length }}", {"xs": [1, 2]}),
    ("err_break_outside_loop", "{% break %}", {}),
]


def build_cases():
    names = set()
    out = []
    for name, template, context in CASES:
        assert name not in names, f"duplicate case name {name}"
        names.add(name)
        result, error = render(template, context)
        case = {"name": name, "template": template, "context": context}
        if error is None:
            case["expected"] = result
        else:
            case["error"] = True
        out.append(case)
    return {
        "note": ("Small Jinja templates, one language feature each. `expected` (or `error`: true "
                 "where Jinja2 raises at parse or render time; the C++ engine need only fail too) "
                 "comes from Jinja2 " + jinja2.__version__ + " configured as transformers' "
                 "_compile_jinja_template configures it: ImmutableSandboxedEnvironment(trim_blocks="
                 "True, lstrip_blocks=True, extensions=[loopcontrols, a no-op {% generation %} "
                 "block]), tojson = json.dumps(x, ensure_ascii=False, indent, separators, "
                 "sort_keys) (no HTML escaping), raise_exception raises TemplateError, "
                 "strftime_now formats 2025-06-15 00:00:00. `context` holds the variables passed "
                 "to render(); object key order is significant (dict iteration follows it), and "
                 "a number written with a '.' or exponent is a float, otherwise an int. Written "
                 "by scripts/gen-jinja-cases.py; do not edit by hand."),
        "cases": out,
    }


# ---------------------------------------------------------------------------------------------
# Real templates on fixed conversations.

TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}]

CONVERSATIONS = [
    {"id": "a-system-user", "what": "system + user, generation prompt",
     "messages": [{"role": "system", "content": "You are a helpful assistant."},
                  {"role": "user", "content": "Hello! What is the capital of France?"}],
     "tools": None, "add_generation_prompt": True, "kwargs": {}},
    {"id": "b-user-only", "what": "one user message, generation prompt",
     "messages": [{"role": "user", "content": "Hi there."}],
     "tools": None, "add_generation_prompt": True, "kwargs": {}},
    {"id": "c-multi-turn", "what": "user/assistant/user, generation prompt",
     "messages": [{"role": "user", "content": "What is 2 + 2?"},
                  {"role": "assistant", "content": "2 + 2 = 4."},
                  {"role": "user", "content": "And 3 + 3?"}],
     "tools": None, "add_generation_prompt": True, "kwargs": {}},
    {"id": "d-ends-on-assistant", "what": "user/assistant x2, ends on the assistant, no generation prompt",
     "messages": [{"role": "user", "content": "What is 2 + 2?"},
                  {"role": "assistant", "content": "2 + 2 = 4."},
                  {"role": "user", "content": "And 3 + 3?"},
                  {"role": "assistant", "content": "3 + 3 = 6."}],
     "tools": None, "add_generation_prompt": False, "kwargs": {}},
    {"id": "e-tools", "what": "tools list, assistant tool call (content \"\", arguments as an object), tool result, generation prompt",
     "messages": [{"role": "system", "content": "You are a weather bot."},
                  {"role": "user", "content": "What's the weather in Paris?"},
                  {"role": "assistant", "content": "", "tool_calls": [{
                      "id": "call00001", "type": "function",
                      "function": {"name": "get_weather",
                                   "arguments": {"city": "Paris", "unit": "celsius"}}}]},
                  {"role": "tool", "tool_call_id": "call00001", "name": "get_weather",
                   "content": "{\"temperature\": 22, \"condition\": \"sunny\"}"}],
     "tools": TOOLS, "add_generation_prompt": True, "kwargs": {}},
    {"id": "f-reasoning-thinking-off", "what": "assistant turn with reasoning_content in history, enable_thinking false, generation prompt",
     "messages": [{"role": "user", "content": "What is 2 + 2?"},
                  {"role": "assistant", "content": "4",
                   "reasoning_content": "Simple addition: 2 + 2 = 4."},
                  {"role": "user", "content": "And 3 + 3?"}],
     "tools": None, "add_generation_prompt": True, "kwargs": {"enable_thinking": False}},
    {"id": "g-unicode", "what": "CJK, emoji ZWJ sequences and flags, Arabic, Devanagari, combining accent, leading/trailing spaces, tab, newline",
     "messages": [{"role": "user", "content": "  こんにちは、世界！ 👩\u200d👩\u200d👧\u200d👦 مرحبا नमस्ते e\u0301 Ça va?\t\n"},
                  {"role": "assistant", "content": "Bonjour ! 😊 «ok» 你好"},
                  {"role": "user", "content": "Ünïcödé — “quotes” ‘single’ … ∑ √ ∞ 🇫🇷 👍🏽"}],
     "tools": None, "add_generation_prompt": True, "kwargs": {}},
]

SIZE_LIMIT = 1_500_000


def render_conversation(compiled, conv):
    # As transformers' apply_chat_template: messages, tools, documents, add_generation_prompt,
    # then the special tokens and the extra kwargs.
    conv = json.loads(json.dumps(conv, ensure_ascii=False))
    return compiled.render(messages=conv["messages"], tools=conv["tools"], documents=None,
                           add_generation_prompt=conv["add_generation_prompt"],
                           **{**conv["special_tokens"], **conv["kwargs"]})


def build_real(repo):
    def git(*args):
        return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True).stdout
    commit = git("rev-parse", "HEAD").decode().strip()
    names = sorted(p for p in git("ls-tree", "-r", "--name-only", "HEAD", "models/templates")
                   .decode().splitlines() if p.endswith(".jinja"))
    convs = [{**c, "special_tokens": dict(SPECIAL_TOKENS)} for c in CONVERSATIONS]
    templates = []
    for path in names:
        text = git("show", f"HEAD:{path}").decode("utf-8")
        entry = {"source": os.path.basename(path), "template": text, "renders": {}}
        try:
            compiled = ENV.from_string(text)
        except Exception as e:  # noqa: BLE001
            entry["parse_error"] = f"{type(e).__name__}: {e}"
            compiled = None
        for conv in convs:
            if compiled is None:
                entry["renders"][conv["id"]] = {"error": entry["parse_error"]}
                continue
            try:
                entry["renders"][conv["id"]] = {"expected": render_conversation(compiled, conv)}
            except Exception as e:  # noqa: BLE001
                entry["renders"][conv["id"]] = {"error": f"{type(e).__name__}: {e}"}
        templates.append(entry)
    doc = {
        "note": ("Real chat templates (models/templates/*.jinja of llama.cpp, git mirror commit "
                 + commit + ") rendered on fixed conversations by Jinja2 " + jinja2.__version__
                 + " configured as transformers' _compile_jinja_template configures it (see "
                 "cases.json's note; strftime_now is pinned to 2025-06-15 00:00:00). Each "
                 "conversation is rendered as apply_chat_template does: render(messages=, tools=, "
                 "documents=None, add_generation_prompt=, **special_tokens, **kwargs). `renders` "
                 "maps a conversation id to {\"expected\": output} or {\"error\": Jinja2's "
                 "message} (the template raised, e.g. raise_exception or a sandbox "
                 "SecurityError); a template Jinja2 cannot parse has `parse_error`. Written by "
                 "scripts/gen-jinja-cases.py; do not edit by hand."),
        "conversations": convs,
        "templates": templates,
    }
    # Keep the file small: past the limit, drop the renders of the largest templates for the
    # conversations whose coverage others repeat (b, then c, then g).
    dropped = []
    for conv_id in ("b-user-only", "c-multi-turn", "g-unicode"):
        if len(dumps(doc).encode()) <= SIZE_LIMIT:
            break
        for entry in sorted(templates, key=lambda t: -len(t["template"])):
            if len(dumps(doc).encode()) <= SIZE_LIMIT:
                break
            if entry["renders"].pop(conv_id, None) is not None:
                dropped.append((entry["source"], conv_id))
    if dropped:
        doc["note"] += f" Renders dropped to keep the file small: {len(dropped)}."
    return doc


def dumps(doc):
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default="/work/.mirror/kmbandy+llama.cpp/repo",
                    help="llama.cpp git directory holding models/templates at HEAD")
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "fixtures", "jinja"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases = build_cases()
    with open(os.path.join(args.out, "cases.json"), "w", encoding="utf-8") as f:
        f.write(dumps(cases))
    real = build_real(args.repo)
    with open(os.path.join(args.out, "real_templates.json"), "w", encoding="utf-8") as f:
        f.write(dumps(real))
    n_err = sum(1 for c in cases["cases"] if c.get("error"))
    renders = [r for t in real["templates"] for r in t["renders"].values()]
    print(f"cases.json: {len(cases['cases'])} cases ({n_err} errors); real_templates.json: "
          f"{len(real['templates'])} templates, {len(renders)} renders "
          f"({sum('error' in r for r in renders)} errors)", file=sys.stderr)


if __name__ == "__main__":
    main()
