// indexer_oracle._core: the thin pybind11 layer over the C++ oracle and suite. Arrays in
// and out as numpy; every rule lives in reference/ and suite/ (this file only converts).
// The Python package (python/indexer_oracle) adds torch, layouts, plots and docstrings.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <tuple>

#include "backend.hpp"
#include "external/exec_backend.hpp"
#include "ixo/case_io.hpp"
#include "ixo/case_run.hpp"
#include "ixo/contract.hpp"
#include "ixo/default_suite.hpp"
#include "ixo/error.hpp"
#include "ixo/fuzz.hpp"
#include "ixo/generate.hpp"
#include "ixo/observed_arrays.hpp"
#include "ixo/oracle.hpp"
#include "ixo/transform.hpp"
#include "ixo/verdict.hpp"

namespace py = pybind11;
using ixo::Case;

namespace {

template <class T>
py::array_t<T> to_numpy(const std::vector<T>& v, std::vector<py::ssize_t> shape) {
  py::array_t<T> a(shape);
  if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
  return a;
}

template <class T>
std::vector<T> from_numpy(const py::array_t<T, py::array::c_style | py::array::forcecast>& a) {
  return {a.data(), a.data() + a.size()};
}

std::vector<std::int64_t> shape_of(const py::array& a) { return {a.shape(), a.shape() + a.ndim()}; }

void need_ndim(const py::array& a, int ndim, const char* field, const char* dims) {
  if (a.ndim() != ndim)
    throw ixo::InputError(
        field, "has " + std::to_string(a.ndim()) + " dimensions, expected " + std::to_string(ndim) + " " + dims);
}

// q: uint16 bf16 bits, or uint8 e4m3fn codes (q_dtype e4m3fn) [R,Hq,D]; k: uint16 bf16 bits or
// uint8 fp8 codes [S,Hk,D], or uint8 nvfp4 packed codes [S,Hk,D/2] with k_scales uint8 [S,Hk,D/16].
// req_to_token may be None when page_table is given (it is then derived from the table).
using I32Array = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>;
Case make_case(py::array q, py::array k, std::optional<I32Array> req_to_token,
               py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> slot_ids,
               py::array_t<std::int64_t, py::array::c_style | py::array::forcecast> seq_lens,
               const std::string& config_json, std::optional<I32Array> page_table, const py::object& k_scales) {
  Case c;
  c.cfg = ixo::parse_config_json(config_json);
  need_ndim(q, 3, "q", "[R, Hq, D]");
  need_ndim(k, 3, "k_cache", "[S, Hk, D]");
  if (!req_to_token && !page_table) throw ixo::InputError("req_to_token", "missing (give it, or a page_table)");
  if (req_to_token) need_ndim(*req_to_token, 2, "req_to_token", "[rows, width]");
  if (page_table) need_ndim(*page_table, 2, "page_table", "[rows, max_pages]");
  need_ndim(slot_ids, 1, "slot_ids", "[R]");
  need_ndim(seq_lens, 1, "seq_lens", "[R]");
  c.R = q.shape(0), c.Hq = q.shape(1), c.D = q.shape(2);
  c.S = k.shape(0), c.Hk = k.shape(1);
  const bool fp4 = ixo::is_nvfp4(c.cfg.k_dtype);
  if (fp4) ixo::check_nvfp4_head_dim(c.cfg.k_dtype, c.D);
  if (k.shape(2) != (fp4 ? c.D / 2 : c.D))
    throw ixo::InputError("k_cache", "dim 2 is " + std::to_string(k.shape(2)) + ", expected " +
                                         std::to_string(fp4 ? c.D / 2 : c.D) +
                                         (fp4 ? " (nvfp4: D/2 bytes of two E2M1 codes)" : " (q's head dim)"));
  if (page_table) {
    c.rows = page_table->shape(0), c.max_pages = page_table->shape(1);
    if (req_to_token && req_to_token->shape(0) != c.rows)
      throw ixo::InputError("page_table", "has " + std::to_string(c.rows) + " rows, req_to_token " +
                                              std::to_string(req_to_token->shape(0)));
    c.page_table = from_numpy(*page_table);
  }
  if (req_to_token) c.rows = req_to_token->shape(0), c.width = req_to_token->shape(1);
  if (c.cfg.q_dtype == ixo::KDtype::bf16) {
    if (q.itemsize() != 2)
      throw ixo::InputError("q", "bf16 bits must be 2-byte elements, got " + std::to_string(q.itemsize()));
    c.q = from_numpy(py::array_t<std::uint16_t, py::array::c_style | py::array::forcecast>(q));
  } else {
    if (q.itemsize() != 1)
      throw ixo::InputError("q", "e4m3fn codes must be 1-byte elements, got " + std::to_string(q.itemsize()));
    const auto q8 = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>(q);
    c.q.assign(q8.data(), q8.data() + q8.size());
  }
  if (fp4) {
    if (k_scales.is_none()) throw ixo::InputError("k_scales", "required for nvfp4 K ([S, Hk, D/16] e4m3fn codes)");
    const auto ks = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>::ensure(k_scales);
    if (!ks || py::array(k_scales).itemsize() != 1) throw ixo::InputError("k_scales", "must be 1-byte e4m3fn codes");
    need_ndim(ks, 3, "k_scales", "[S, Hk, D/16]");
    if (ks.shape(0) != c.S || ks.shape(1) != c.Hk || ks.shape(2) != c.D / ixo::kNvfp4Block)
      throw ixo::InputError("k_scales", "shape [" + std::to_string(ks.shape(0)) + ", " + std::to_string(ks.shape(1)) +
                                            ", " + std::to_string(ks.shape(2)) + "] does not match [S, Hk, D/16] = [" +
                                            std::to_string(c.S) + ", " + std::to_string(c.Hk) + ", " +
                                            std::to_string(c.D / ixo::kNvfp4Block) + "]");
    c.k_scales = from_numpy<std::uint8_t>(ks);
  } else if (!k_scales.is_none()) {
    throw ixo::InputError("k_scales",
                          "given, but k_dtype " + std::string(ixo::to_string(c.cfg.k_dtype)) + " has no block scales");
  }
  if (c.cfg.k_dtype != ixo::KDtype::bf16) {
    if (k.itemsize() != 1)
      throw ixo::InputError("k_cache", "fp8 codes must be 1-byte elements, got " + std::to_string(k.itemsize()));
    c.k_cache = from_numpy(py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>(k));
  } else {
    if (k.itemsize() != 2)
      throw ixo::InputError("k_cache", "bf16 bits must be 2-byte elements, got " + std::to_string(k.itemsize()));
    const auto k16 = py::array_t<std::uint16_t, py::array::c_style | py::array::forcecast>(k);
    c.k_cache.resize(static_cast<std::size_t>(k16.size()) * 2);
    std::memcpy(c.k_cache.data(), k16.data(), c.k_cache.size());
  }
  if (req_to_token)
    c.req_to_token = from_numpy(*req_to_token);
  else
    ixo::derive_req_to_token(c);
  c.slot_ids = from_numpy(slot_ids);
  c.seq_lens = from_numpy(seq_lens);
  ixo::validate(c);
  return c;
}

py::array k_cache_array(const Case& c) {
  if (ixo::is_nvfp4(c.cfg.k_dtype)) return to_numpy(c.k_cache, {c.S, c.Hk, c.D / 2});
  if (ixo::is_fp8(c.cfg.k_dtype)) return to_numpy(c.k_cache, {c.S, c.Hk, c.D});
  std::vector<std::uint16_t> bits(c.k_cache.size() / 2);
  std::memcpy(bits.data(), c.k_cache.data(), c.k_cache.size());
  return to_numpy(bits, {c.S, c.Hk, c.D});
}

py::tuple observed_to_numpy(const ixo::Observed& o) {
  py::object scores = py::none();
  if (o.has_scores) scores = to_numpy(o.scores, {o.Hq, o.R, o.NB});
  return py::make_tuple(to_numpy(o.topk_idx, {o.Hq, o.R, o.topk}), scores);
}

ixo::Observed observed_from_numpy(const Case& c,
                                  py::array_t<std::int32_t, py::array::c_style | py::array::forcecast> topk,
                                  const py::object& scores) {
  if (scores.is_none()) return ixo::observed_from_arrays(c, shape_of(topk), from_numpy(topk));
  const auto s = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(scores);
  if (!s) throw ixo::InputError("scores", "is not convertible to a float32 array");
  ixo::ScoresArray sa{shape_of(s), from_numpy<float>(s)};
  return ixo::observed_from_arrays(c, shape_of(topk), from_numpy(topk), &sa);
}

py::dict verdict_dict(const ixo::Verdict& v) {
  py::list failures;
  for (const auto& f : v.details) {
    py::dict d;
    d["tier"] = f.tier, d["head"] = f.head, d["row"] = f.row, d["block"] = f.block;
    d["expected"] = f.expected, d["observed"] = f.observed, d["missing"] = f.missing, d["extra"] = f.extra;
    d["margin"] = f.margin, d["tau"] = f.tau, d["message"] = f.message;
    failures.append(d);
  }
  py::dict out;
  out["passed"] = v.pass, out["report"] = v.summary(), out["failures"] = failures;
  out["rows_checked"] = v.rows_checked, out["tie_swaps"] = v.tie_swaps, out["failure_count"] = v.failures;
  return out;
}

// A Python kernel adapter returns ("ok", topk, scores|None), ("unsupported", why),
// ("error", traceback) or ("interrupted", why): indexer_oracle._kernels._adapt builds it.
std::unique_ptr<ixo::Backend> python_backend(const std::string& name, py::function adapter) {
  return ixo::make_callable_backend(name, [adapter](const Case& c) -> ixo::Observed {
    const py::tuple r = adapter(py::cast(c, py::return_value_policy::copy));
    const auto tag = r[0].cast<std::string>();
    if (tag == "interrupted") throw ixo::Interrupted(r[1].cast<std::string>());
    if (tag == "unsupported") throw ixo::Unsupported(r[1].cast<std::string>());
    if (tag == "error") throw ixo::KernelFailure(r[1].cast<std::string>());
    try {
      return observed_from_numpy(c, r[1].cast<py::array>(), r[2]);
    } catch (const ixo::InputError& e) {
      throw ixo::KernelFailure(std::string("the kernel returned malformed outputs: ") + e.what());
    }
  });
}

// Python kernels ("name", adapter) plus built-in backend names, in the given order.
std::vector<std::unique_ptr<ixo::Backend>> backends_of(const py::list& kernels) {
  std::vector<std::unique_ptr<ixo::Backend>> out;
  for (const auto& k : kernels) {
    if (py::isinstance<py::str>(k))
      out.push_back(ixo::make_backend(k.cast<std::string>()));
    else {
      const auto t = k.cast<py::tuple>();
      out.push_back(python_backend(t[0].cast<std::string>(), t[1].cast<py::function>()));
    }
  }
  return out;
}

// Ctrl-C while C++ runs: Python's handler only sets a flag; this runs it between cases.
bool python_interrupted() {
  if (PyErr_CheckSignals() == 0) return false;
  PyErr_Clear();
  return true;
}

// "" = none (each backend's own), else a contract's JSON text.
std::optional<ixo::Contract> contract_arg(const std::string& json) {
  if (json.empty()) return std::nullopt;
  return ixo::contract_from_json(json);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "indexer_oracle._core: C++ oracle, verdict and suite (use the indexer_oracle package instead)";
  py::register_exception<ixo::InputError>(m, "InputError", PyExc_ValueError);

  py::class_<Case>(m, "Case")
      .def_property_readonly("q",
                             [](const Case& c) -> py::array {
                               if (c.cfg.q_dtype == ixo::KDtype::bf16) return to_numpy(c.q, {c.R, c.Hq, c.D});
                               return to_numpy(std::vector<std::uint8_t>(c.q.begin(), c.q.end()), {c.R, c.Hq, c.D});
                             })
      .def_property_readonly("k_scales",
                             [](const Case& c) -> py::object {
                               if (!ixo::is_nvfp4(c.cfg.k_dtype)) return py::none();
                               return to_numpy(c.k_scales, {c.S, c.Hk, c.D / ixo::kNvfp4Block});
                             })
      .def_property_readonly("q_dtype", [](const Case& c) { return std::string(ixo::to_string(c.cfg.q_dtype)); })
      .def_property_readonly("k_cache", &k_cache_array)
      .def_property_readonly("req_to_token",
                             [](const Case& c) {
                               return to_numpy(c.req_to_token, {c.rows, c.width});
                             })
      .def_property_readonly("page_table",
                             [](const Case& c) -> py::object {
                               if (!c.paged()) return py::none();
                               return to_numpy(c.page_table, {c.rows, c.max_pages});
                             })
      .def_property_readonly("slot_ids", [](const Case& c) { return to_numpy(c.slot_ids, {c.R}); })
      .def_property_readonly("seq_lens", [](const Case& c) { return to_numpy(c.seq_lens, {c.R}); })
      .def_property_readonly("config_json", [](const Case& c) { return ixo::config_to_json(c.cfg); })
      .def_property_readonly("sm_scale", &Case::effective_sm_scale)
      .def_property_readonly("k_dtype", [](const Case& c) { return std::string(ixo::to_string(c.cfg.k_dtype)); })
      .def_property_readonly("score_type", [](const Case& c) { return std::string(ixo::to_string(c.cfg.score_type)); })
      .def_property_readonly("NB", &Case::NB)
      .def_readonly("R", &Case::R)
      .def_readonly("Hq", &Case::Hq)
      .def_readonly("Hk", &Case::Hk)
      .def_readonly("D", &Case::D)
      .def_readonly("S", &Case::S);

  m.def("make_case", &make_case, py::arg("q"), py::arg("k"), py::arg("req_to_token"), py::arg("slot_ids"),
        py::arg("seq_lens"), py::arg("config_json"), py::arg("page_table") = py::none(),
        py::arg("k_scales") = py::none());
  // ixo::Config's defaults as case.json text: io.Case takes its keyword defaults from here (one
  // default for every config field, issue 24).
  m.def("config_defaults", [] { return ixo::config_to_json(ixo::Config{}); });
  // The integer knobs of ixo/config_fields.hpp as [(name, default, least, most, required), ...]:
  // io.Case's keywords, checks and properties for them come from this list.
  m.def("config_int_fields", [] {
    std::vector<std::tuple<std::string, int, int, int, bool>> fields;
#define IXO_CONFIG_FIELD(name, dflt, least, most, required, written) \
  fields.emplace_back(#name, dflt, least, most, required);
    IXO_CONFIG_INT_FIELDS(IXO_CONFIG_FIELD)
#undef IXO_CONFIG_FIELD
    return fields;
  });
  m.def("load_case", &ixo::load_case);
  m.def("save_case", &ixo::save_case);
  m.def("presets", &ixo::preset_names);
  m.def("generate", [](const std::string& name, std::uint64_t seed) { return ixo::generate(ixo::preset(name), seed); });
  m.def("reference", [](const Case& c) { return observed_to_numpy(ixo::expected_as_observed(ixo::oracle(c))); });
  m.def("oracle_detail", [](const Case& c) {
    const ixo::Expected e = ixo::oracle(c);
    py::dict d;
    d["score"] = to_numpy(e.score, {e.Hq, e.R, e.NB});
    d["tau"] = to_numpy(e.tau, {e.Hq, e.R, e.NB});
    d["forced"] = to_numpy(e.forced, {e.Hq, e.R, e.NB});
    d["nb"] = to_numpy(e.nb, {e.R});
    d["topk_idx"] = to_numpy(e.topk_idx, {e.Hq, e.R, e.topk});
    return d;
  });
  m.def(
      "check",
      [](const Case& c, py::array topk, py::object scores, bool exact, const std::string& contract_json) {
        const ixo::Observed o = observed_from_numpy(c, topk, scores);
        ixo::JudgeOptions opt;
        opt.exact_ids = exact;
        if (const auto contract = contract_arg(contract_json)) {
          // A case whose only excess is negative aliases is judged (the same truth: aliases wrap).
          std::optional<Case> resolved;
          if (!ixo::judged_form(*contract, c, resolved))
            throw ixo::InputError("case", "lies outside " + contract->label() + ": " + *contract->refuses(c));
          opt.semantics = contract->semantics, opt.contract = contract->label();
        }
        return verdict_dict(ixo::judge(c, ixo::oracle(c), o, opt));
      },
      py::arg("case"), py::arg("topk"), py::arg("scores"), py::arg("exact"), py::arg("contract_json") = "");
  m.def("contract_names", &ixo::contract_names);
  m.def("contract_json", [](const std::string& name) { return ixo::contract_to_json(ixo::named_contract(name)); });
  m.def("contract_normalize",
        [](const std::string& json) { return ixo::contract_to_json(ixo::contract_from_json(json)); });
  m.def("contract_refuses", [](const std::string& json, const Case& c) -> py::object {
    const auto why = ixo::contract_from_json(json).refuses(c);
    return why ? py::object(py::str(*why)) : py::object(py::none());
  });
  m.def("backend_names", &ixo::backend_names);
  m.def("run_backend", [](const std::string& name, const Case& c) -> py::tuple {
    auto b = ixo::make_backend(name);
    std::string why;
    if (!b->available(&why)) throw ixo::InputError("backend", name + " is not available here: " + why);
    if (!b->supports(c, &why)) return py::make_tuple("unsupported", why, py::none());
    const ixo::Observed o = b->run(c);
    const auto t = observed_to_numpy(o);
    return py::make_tuple("ok", t[0], t[1]);
  });
  m.def("fuzz",
        [](py::list kernels, double seconds, std::uint64_t seed, std::vector<std::string> presets, std::string out,
           int max_failures, std::string contract_json, int shapes, int seeds, int cases_per_seed) {
          ixo::FuzzOptions o;
          o.max_failures = max_failures;
          o.seconds = seconds;
          o.seed = seed;
          o.presets = std::move(presets);
          o.out_dir = std::move(out);
          o.contract = contract_arg(contract_json);
          o.shapes = shapes;
          o.max_seeds = seeds;
          o.cases_per_seed = cases_per_seed;
          o.poll = &python_interrupted;
          const auto backends = backends_of(kernels);
          std::vector<std::string> log;
          const ixo::FuzzResult r =
              ixo::run_fuzz(ixo::pointers_of(backends), o, [&](const std::string& s) { log.push_back(s); });
          py::dict d;
          d["cases"] = r.cases, d["judged"] = r.judged, d["skipped"] = r.skipped, d["runs"] = r.runs,
          d["gave_up"] = r.gave_up;
          d["failures"] = r.failures, d["report"] = r.report, d["outcome"] = r.outcome(), d["summary"] = r.summary();
          d["interrupted"] = r.interrupted, d["contracts"] = r.contracts, d["seconds"] = r.seconds;
          d["log"] = log;
          return d;
        });
  m.def("suite", [](py::list kernels, int property_cases, std::uint64_t seed, std::string out, bool properties,
                    bool fixtures, std::string contract_json) {
    ixo::SuiteOptions o;
    o.property_cases = property_cases;
    o.seed = seed;
    o.out_dir = std::move(out);
    o.properties = properties;
    o.fixtures = fixtures;
    o.contract = contract_arg(contract_json);
    o.poll = &python_interrupted;
    const auto backends = backends_of(kernels);
    const ixo::SuiteResult r = ixo::run_suite(ixo::pointers_of(backends), o);
    py::dict d;
    d["passed"] = r.passed, d["table"] = r.table(), d["json"] = r.json().dump(), d["outcome"] = r.outcome();
    d["interrupted"] = r.interrupted;
    return d;
  });
}
