// The filters over lists, dicts and strings as sequences: length, first, last, join, list,
// items, map, select / reject (and their attr forms), sort, dictsort, unique, reverse, sum,
// min, max, batch. Attribute arguments follow Jinja2's make_attrgetter ("a.b.0"), and sorting
// ignores case unless case_sensitive=true, as in Jinja2.
#pragma once

#include "engine/template/template_ast.h"

namespace sluice::jinja {

// length / count: len() of a string, list or dict (0 for undefined).
Value filter_length(RenderState& state, const Value& input, const CallArgs& args);
// first: the first item, or undefined when there is none.
Value filter_first(RenderState& state, const Value& input, const CallArgs& args);
// last: the last item, or undefined when there is none.
Value filter_last(RenderState& state, const Value& input, const CallArgs& args);
// join(d="", attribute=None): str() of each item joined by d.
Value filter_join(RenderState& state, const Value& input, const CallArgs& args);
// list: the items as a list (a string gives its characters, a dict its keys).
Value filter_list(RenderState& state, const Value& input, const CallArgs& args);
// items: a dict's (key, value) pairs; nothing for undefined.
Value filter_items(RenderState& state, const Value& input, const CallArgs& args);
// map(attribute=..., default=...) or map("filter", args...).
Value filter_map(RenderState& state, const Value& input, const CallArgs& args);
// select("test", args...): the items passing the test (truthy ones without a test).
Value filter_select(RenderState& state, const Value& input, const CallArgs& args);
// reject("test", args...): the items failing the test.
Value filter_reject(RenderState& state, const Value& input, const CallArgs& args);
// selectattr("attr", "test", args...): the items whose attribute passes the test.
Value filter_selectattr(RenderState& state, const Value& input, const CallArgs& args);
// rejectattr("attr", "test", args...): the items whose attribute fails the test.
Value filter_rejectattr(RenderState& state, const Value& input, const CallArgs& args);
// sort(reverse=False, case_sensitive=False, attribute=None): a stable sort.
Value filter_sort(RenderState& state, const Value& input, const CallArgs& args);
// dictsort(case_sensitive=False, by="key", reverse=False): sorted (key, value) pairs.
Value filter_dictsort(RenderState& state, const Value& input, const CallArgs& args);
// unique(case_sensitive=False, attribute=None): first occurrences, in order.
Value filter_unique(RenderState& state, const Value& input, const CallArgs& args);
// reverse: a string backwards, or the items in reverse order.
Value filter_reverse(RenderState& state, const Value& input, const CallArgs& args);
// sum(attribute=None, start=0): start + each item.
Value filter_sum(RenderState& state, const Value& input, const CallArgs& args);
// min(case_sensitive=False, attribute=None): the smallest item, undefined when empty.
Value filter_min(RenderState& state, const Value& input, const CallArgs& args);
// max(case_sensitive=False, attribute=None): the largest item, undefined when empty.
Value filter_max(RenderState& state, const Value& input, const CallArgs& args);
// batch(linecount, fill_with=None): the items in lists of linecount.
Value filter_batch(RenderState& state, const Value& input, const CallArgs& args);

}  // namespace sluice::jinja
