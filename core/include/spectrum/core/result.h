// SPDX-License-Identifier: Apache-2.0
#pragma once
// Result<T>: a value or an Error, never both. The return type of every blocking operation.

#include "spectrum/core/error.h"

#include <optional>
#include <utility>

namespace spectrum {

template <typename T>
class Result
{
public:
    /// A result that holds neither value nor a real error yet: reports ErrorCode::Internal if read.
    Result() : m_error(ErrorCode::Internal, QStringLiteral("no result was produced")) {}
    Result(T value) : m_value(std::move(value)) {}  // NOLINT: implicit on purpose, `return value;`
    Result(Error error) : m_error(std::move(error)) {}  // NOLINT: implicit on purpose, `return Error(...);`

    bool isOk() const { return m_value.has_value(); }
    const Error &error() const { return m_error; }

    /// Precondition: isOk().
    const T &value() const & { return *m_value; }
    T &value() & { return *m_value; }
    T takeValue() { return std::move(*m_value); }

    const T &valueOr(const T &fallback) const { return m_value ? *m_value : fallback; }

private:
    std::optional<T> m_value;
    Error m_error;
};

/// For operations that produce nothing but success or an error.
struct Done {};

} // namespace spectrum
