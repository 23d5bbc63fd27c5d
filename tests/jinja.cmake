# The Jinja engine against Jinja2 configured as transformers configures it: one case per language
# feature (tests/fixtures/jinja/cases.json) and real chat templates on fixed conversations
# (real_templates.json), both written by scripts/gen-jinja-cases.py.
switchyard_add_test(test_jinja SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_jinja.cpp
  LIBS switchyard_jinja)
