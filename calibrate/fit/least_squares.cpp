// calibrate/fit/least_squares.cpp: weighted least squares with Eigen's column-pivoting QR.
#include "calibrate/fit/least_squares.hpp"

#include "sim/base/assert.hpp"

#include <Eigen/Dense>

#include <cmath>

namespace calibrate::fit {

std::vector<double> relative_weights(std::span<const double> y) {
  std::vector<double> w;
  w.reserve(y.size());
  for (double v : y)
    w.push_back(v != 0 ? 1.0 / (v * v) : 0.0);
  return w;
}

std::optional<LinearFit> weighted_least_squares(const std::vector<std::vector<double>>& rows, std::span<const double> y,
                                                std::span<const double> w) {
  SIM_ASSERT(rows.size() == y.size() && y.size() == w.size(), "least squares inputs of different lengths");
  SIM_ASSERT(!rows.empty(), "least squares without points");
  const auto n = static_cast<Eigen::Index>(rows.size());
  const auto p = static_cast<Eigen::Index>(rows.front().size());
  if (n < p) return std::nullopt;
  Eigen::MatrixXd a(n, p);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& row = rows[static_cast<std::size_t>(i)];
    SIM_ASSERT(static_cast<Eigen::Index>(row.size()) == p, "ragged design matrix");
    const double s = std::sqrt(w[static_cast<std::size_t>(i)]);
    for (Eigen::Index j = 0; j < p; ++j)
      a(i, j) = s * row[static_cast<std::size_t>(j)];
    b(i) = s * y[static_cast<std::size_t>(i)];
  }
  // Columns of very different scale (a step count next to a byte count) would fool the rank decision: normalise.
  Eigen::VectorXd scale(p);
  for (Eigen::Index j = 0; j < p; ++j) {
    const double norm = a.col(j).norm();
    if (norm == 0) return std::nullopt;
    scale(j) = norm;
    a.col(j) /= norm;
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
  qr.setThreshold(1e-10);
  if (qr.rank() < p) return std::nullopt;
  const Eigen::VectorXd x = qr.solve(b);

  LinearFit fit;
  fit.coef.resize(static_cast<std::size_t>(p));
  for (Eigen::Index j = 0; j < p; ++j)
    fit.coef[static_cast<std::size_t>(j)] = x(j) / scale(j);
  double sw = 0, swy = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    sw += w[i];
    swy += w[i] * y[i];
  }
  const double mean = sw > 0 ? swy / sw : 0;
  double sst = 0, sum_rel2 = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    double fitted = 0;
    for (std::size_t j = 0; j < fit.coef.size(); ++j)
      fitted += rows[i][j] * fit.coef[j];
    const double r = y[i] - fitted;
    fit.ssr += w[i] * r * r;
    sst += w[i] * (y[i] - mean) * (y[i] - mean);
    const double rel = y[i] != 0 ? std::fabs(r / y[i]) : 0;
    sum_rel2 += rel * rel;
    if (rel > fit.max_rel) {
      fit.max_rel = rel;
      fit.worst = i;
    }
  }
  fit.rms_rel = std::sqrt(sum_rel2 / static_cast<double>(y.size()));
  fit.r2 = sst > 0 ? 1.0 - fit.ssr / sst : (fit.ssr == 0 ? 1.0 : 0.0);
  return fit;
}

}  // namespace calibrate::fit
