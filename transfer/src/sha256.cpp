// SPDX-License-Identifier: Apache-2.0
#include "spectrum/transfer/sha256.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>

namespace spectrum {

struct Sha256::Context
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
};

Sha256::Sha256() : m_ctx(new Context)
{
    reset();
}

Sha256::~Sha256()
{
    EVP_MD_CTX_free(m_ctx->md);
    delete m_ctx;
}

void Sha256::reset()
{
    EVP_DigestInit_ex(m_ctx->md, EVP_sha256(), nullptr);
}

void Sha256::add(const char *data, qint64 length)
{
    while (length > 0) {
        const size_t n = size_t(std::min<qint64>(length, qint64(1) << 30));
        EVP_DigestUpdate(m_ctx->md, data, n);
        data += n;
        length -= qint64(n);
    }
}

QByteArray Sha256::result()
{
    QByteArray digest(32, '\0');
    unsigned int len = 0;
    EVP_DigestFinal_ex(m_ctx->md, reinterpret_cast<unsigned char *>(digest.data()), &len);
    reset();
    return digest;
}

QByteArray Sha256::hash(const char *data, qint64 length)
{
    Sha256 h;
    h.add(data, length);
    return h.result();
}

void Sha256::releaseThreadState()
{
    OPENSSL_thread_stop();
}

} // namespace spectrum
