// /metrics in the Prometheus text format (version 0.0.4): the engine service's gauges,
// counters and latency histograms, each labelled with the served model's name.
#pragma once

#include <string>

#include "engine/service/service_metrics.h"

namespace sluice {

// Returns the exposition text for a metrics snapshot. Names start with "sluice:" (as vLLM's
// start with "vllm:"); histograms have cumulative _bucket{le=...}, _sum and _count lines.
std::string prometheus_text(const ServiceMetrics& metrics, const std::string& model_name);

}  // namespace sluice
