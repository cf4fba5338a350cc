// Prometheus's text exposition format (version 0.0.4), written sans-IO into a string: one family
// at a time (HELP and TYPE once, then its samples), label values escaped, histograms made
// cumulative from common/metrics.h's per-bucket counts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/metrics.h"

namespace sigil::common {

using MetricLabels = std::vector<std::pair<std::string_view, std::string_view>>;

class PrometheusText {
public:
    static constexpr const char* CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    // Starts a family: `type` is "counter", "gauge" or "histogram". Call once per name.
    void Family(std::string_view name, std::string_view type, std::string_view help);
    // One sample of the current family (`name` may carry a suffix such as _total).
    void Sample(std::string_view name, const MetricLabels& labels, double value);
    void Sample(std::string_view name, const MetricLabels& labels, std::uint64_t value);
    // A histogram's _bucket, _sum and _count samples (seconds).
    void Histogram(std::string_view name, const MetricLabels& labels, const SharedHistogram& histogram);

    const std::string& text() const { return m_out; }

private:
    void Series(std::string_view name, const MetricLabels& labels, std::string_view extra_label = {},
                std::string_view extra_value = {});
    std::string m_out;
};

// A label value with \, " and newline escaped as the format requires.
std::string EscapeLabelValue(std::string_view value);

}  // namespace sigil::common
