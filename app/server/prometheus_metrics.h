// /metrics in the Prometheus text format (version 0.0.4): the engine service's gauges,
// counters and latency histograms, each labelled with the served model's name.
#pragma once

#include <cstdint>
#include <string>

#include "engine/service/service_metrics.h"

namespace sluice {

// The HTTP server's own gauges: what the requests in flight hold of its budgets.
struct ServerGauges {
  uint64_t request_body_bytes_in_flight = 0;  // of --max-body-bytes-in-flight
  uint64_t response_entries_in_flight = 0;    // of --max-response-entries-in-flight
};

// Returns the exposition text for a metrics snapshot. Names start with "sluice:" (as vLLM's
// start with "vllm:"); histograms have cumulative _bucket{le=...}, _sum and _count lines.
std::string prometheus_text(const ServiceMetrics& metrics, const std::string& model_name,
                            const ServerGauges& server = {});

}  // namespace sluice
