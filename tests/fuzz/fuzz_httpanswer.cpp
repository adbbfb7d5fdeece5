// SPDX-License-Identifier: Apache-2.0
// The HTTP/1.1 answer reader (httpanswer.cpp: what S3's and WADO-RS's direct paths read off the socket) on any
// bytes, split anywhere, taken by S3's own answer reader: interim answers, heads, Content-Length, chunks and
// until-close bodies. An answer taken whole holds only bytes of the input; a broken one is an error, never a crash
// or a body bigger than what came.
#include "fuzztarget.h"

#include "httpanswer.h"
#include "s3/s3job.h"

#include <QByteArray>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace {

/// The input after its first two bytes, handed out in pieces the Splitter draws.
class Bytes : public spectrum::HttpAnswerSource
{
public:
    Bytes(const uint8_t *data, size_t size) : m_data(data), m_size(size), m_split(data, size) {}
    spectrum::Result<qint64> receive(char *into, qint64 capacity, bool) override
    {
        if (m_at >= m_size)
            return qint64(0);
        const size_t n = std::min(m_split.next(m_size - m_at), size_t(capacity));
        std::memcpy(into, m_data + m_at, n);
        m_at += n;
        return qint64(n);
    }

private:
    const uint8_t *m_data;
    size_t m_size, m_at = 2;
    spectrum::fuzz::Splitter m_split;
};

} // namespace

SPECTRUM_FUZZ_TARGET(httpanswer)
{
    using namespace spectrum;
    if (size < 2)
        return 0;
    // The second byte: a HEAD or a GET, hashed or not, and how much the reader may take (a range's length, or more).
    const bool head = data[1] & 1, hash = data[1] & 2;
    const qint64 limit = (data[1] & 4) ? 64 : (qint64(1) << 20);
    s3wire::DirectOutcome out;
    s3wire::AnswerReader reader(out, limit, 4096, head, hash);
    Bytes bytes(data, size);
    const HttpAnswerEnd end = readHttpAnswer(bytes, head ? QByteArrayLiteral("HEAD") : QByteArrayLiteral("GET"), QStringLiteral("fuzz"), reader);
    if (!end.error.isError() && out.body.size() > qint64(size))
        std::abort();  // a body bigger than the input: bytes that never came
    if (end.error.isError() && end.reusable)
        std::abort();  // a connection whose answer broke is never kept
    if (!end.error.isError() && out.answer.status < 200)
        std::abort();  // only a final answer ends the exchange
    return 0;
}
