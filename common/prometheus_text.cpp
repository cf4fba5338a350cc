#include "common/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace sigil::common {
namespace {

std::string FormatDouble(double v) {
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    if (std::isnan(v)) return "NaN";
    // The shortest text that reads back as the same double: 0.025, not 0.025000000000000001.
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::string("NaN");
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out.push_back(c);
    }
    return out;
}

void PrometheusText::Family(std::string_view name, std::string_view type, std::string_view help) {
    m_out.append("# HELP ").append(name).append(" ").append(help).append("\n");
    m_out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void PrometheusText::Series(std::string_view name, const MetricLabels& labels, std::string_view extra_label,
                            std::string_view extra_value) {
    m_out.append(name);
    if (labels.empty() && extra_label.empty()) return;
    m_out.push_back('{');
    bool first = true;
    for (const auto& [k, v] : labels) {
        if (!first) m_out.push_back(',');
        first = false;
        m_out.append(k).append("=\"").append(EscapeLabelValue(v)).append("\"");
    }
    if (!extra_label.empty()) {
        if (!first) m_out.push_back(',');
        m_out.append(extra_label).append("=\"").append(extra_value).append("\"");
    }
    m_out.push_back('}');
}

void PrometheusText::Sample(std::string_view name, const MetricLabels& labels, double value) {
    Series(name, labels);
    m_out.append(" ").append(FormatDouble(value)).append("\n");
}

void PrometheusText::Sample(std::string_view name, const MetricLabels& labels, std::uint64_t value) {
    Series(name, labels);
    m_out.append(" ").append(std::to_string(value)).append("\n");
}

void PrometheusText::Histogram(std::string_view name, const MetricLabels& labels, const SharedHistogram& histogram) {
    // Read the buckets first and derive the count from them, so a scrape racing an Observe never
    // shows a _count below its +Inf bucket.
    std::uint64_t cumulative = 0;
    const std::string bucket = std::string(name) + "_bucket";
    for (std::uint32_t i = 0; i <= HISTOGRAM_BOUNDS; ++i) {
        cumulative += histogram.buckets[i].load(std::memory_order_relaxed);
        const std::string le = i < HISTOGRAM_BOUNDS ? FormatDouble(HISTOGRAM_BOUNDS_S[i]) : "+Inf";
        Series(bucket, labels, "le", le);
        m_out.append(" ").append(std::to_string(cumulative)).append("\n");
    }
    Sample(std::string(name) + "_sum", labels, static_cast<double>(histogram.sum_us.load(std::memory_order_relaxed)) / 1e6);
    Sample(std::string(name) + "_count", labels, cumulative);
}

}  // namespace sigil::common
