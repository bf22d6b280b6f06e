"""LSTM taggers (the POS tagger tutorial, a packed bidirectional classifier), the
word_language_model RNN example and the Annotated Transformer, as their sources write them,
at toy sizes; compared with PyTorch by test_script_sequence.py.
"""
import copy
import math

from script_harness import data, init_params
from sequence_tutorials import _params


# --- 5. LSTM taggers: the POS tagger tutorial and a packed bidirectional classifier -------

def run_lstm_tagger(torch):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim

    def prepare_sequence(seq, to_ix):
        idxs = [to_ix[w] for w in seq]
        return torch.tensor(idxs, dtype=torch.long)

    training_data = [
        ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
        ("Everybody read that book".split(), ["NN", "V", "DET", "NN"]),
    ]
    word_to_ix = {}
    for sent, tags in training_data:
        for word in sent:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)
    tag_to_ix = {"DET": 0, "NN": 1, "V": 2}

    class LSTMTagger(nn.Module):
        def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
            super(LSTMTagger, self).__init__()
            self.hidden_dim = hidden_dim
            self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)
            self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

        def forward(self, sentence):
            embeds = self.word_embeddings(sentence)
            lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
            tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
            tag_scores = F.log_softmax(tag_space, dim=1)
            return tag_scores

    model = init_params(torch, LSTMTagger(6, 6, len(word_to_ix), len(tag_to_ix)), seed=12)
    loss_function = nn.NLLLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    out = {"losses": []}
    for epoch in range(2):
        for sentence, tags in training_data:
            model.zero_grad()
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = prepare_sequence(tags, tag_to_ix)
            tag_scores = model(sentence_in)
            loss = loss_function(tag_scores, targets)
            loss.backward()
            optimizer.step()
            out["losses"].append(loss.item())
    with torch.no_grad():
        out["scores"] = model(prepare_sequence(training_data[0][0], word_to_ix))

    # the explicit hidden state tuple of the older tutorial
    lstm = init_params(torch, nn.LSTM(3, 3), seed=13)
    inputs = [data(torch, 14 + i, 1, 3) for i in range(3)]
    hidden = (data(torch, 20, 1, 1, 3), data(torch, 21, 1, 1, 3))
    for i in inputs:
        o, hidden = lstm(i.view(1, 1, -1), hidden)
    inputs = torch.cat(inputs).view(len(inputs), 1, -1)
    hidden = (data(torch, 20, 1, 1, 3), data(torch, 21, 1, 1, 3))
    o2, hidden2 = lstm(inputs, hidden)
    out["step_vs_seq"] = (o, o2[-1:], hidden, hidden2)

    class BiLSTMClassifier(nn.Module):
        def __init__(self, vocab, emb, hid, n_cls):
            super().__init__()
            self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
            self.lstm = nn.LSTM(emb, hid, num_layers=2, bidirectional=True, batch_first=True)
            self.gru = nn.GRU(emb, hid, batch_first=True)
            self.fc = nn.Linear(3 * hid, n_cls)

        def forward(self, x, lengths, h0):
            emb = self.embedding(x)
            packed = nn.utils.rnn.pack_padded_sequence(emb, lengths, batch_first=True,
                                                       enforce_sorted=False)
            packed_out, (h_n, c_n) = self.lstm(packed)
            out, out_lengths = nn.utils.rnn.pad_packed_sequence(
                packed_out, batch_first=True, total_length=x.size(1))
            idx = (lengths - 1).view(-1, 1, 1).expand(-1, 1, out.size(2))
            last = out.gather(1, idx).squeeze(1)
            g_out, g_h = self.gru(emb, h0)
            feats = torch.cat([last, g_h[-1]], dim=1)
            return self.fc(feats), out, out_lengths, h_n

    model = init_params(torch, BiLSTMClassifier(8, 4, 3, 2), seed=15)
    x = data(torch, 16, 3, 5, kind="int", high=7) + 1
    lengths = torch.tensor([3, 5, 2])
    for b, n in enumerate(lengths.tolist()):
        x[b, n:] = 0
    y = torch.tensor([1, 0, 1])
    h0 = data(torch, 17, 1, 3, 3)
    opt = optim.Adam(model.parameters(), lr=0.01)
    for step in range(2):
        logits, padded, out_lengths, h_n = model(x, lengths, h0)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        out["losses"].append(loss.item())
        out[f"grad_lstm_{step}"] = model.lstm.weight_hh_l1_reverse.grad.clone()
        opt.step()
    out["padded"] = padded
    out["out_lengths"] = out_lengths
    out["h_n"] = h_n
    out["bilstm"] = _params(model)
    return out


# --- 6. word_language_model (pytorch/examples): RNNModel with tied weights ---------------

def run_word_language_model(torch, rnn_type):
    nn = torch.nn
    F = torch.nn.functional

    class RNNModel(nn.Module):
        """Container module with an encoder, a recurrent module, and a decoder."""

        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5,
                     tie_weights=False):
            super(RNNModel, self).__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            if rnn_type in ['LSTM', 'GRU']:
                self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            else:
                nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
                self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity,
                                  dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            if tie_weights:
                if nhid != ninp:
                    raise ValueError('When using the tied flag, nhid must be equal to emsize')
                self.decoder.weight = self.encoder.weight
            self.init_weights()
            self.rnn_type = rnn_type
            self.nhid = nhid
            self.nlayers = nlayers

        def init_weights(self):
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output)
            decoded = decoded.view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            if self.rnn_type == 'LSTM':
                return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                        weight.new_zeros(self.nlayers, bsz, self.nhid))
            else:
                return weight.new_zeros(self.nlayers, bsz, self.nhid)

    def repackage_hidden(h):
        """Wraps hidden states in new Tensors, to detach them from their history."""
        if isinstance(h, torch.Tensor):
            return h.detach()
        else:
            return tuple(repackage_hidden(v) for v in h)

    # dropout=0.0: the example's dropout masks cannot be matched across libraries
    model = RNNModel(rnn_type, 10, 6, 6, 2, dropout=0.0, tie_weights=True)
    init_params(torch, model, seed=3)
    train_data = data(torch, 4, 12, 2, kind="int", high=10)
    criterion = nn.NLLLoss()
    out = {"losses": [], "generated": []}
    lr, bptt = 2.0, 3
    model.train()
    hidden = model.init_hidden(2)
    for i in range(0, train_data.size(0) - bptt, bptt):
        data_ = train_data[i:i + bptt]
        targets = train_data[i + 1:i + 1 + bptt].reshape(-1)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data_, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        out["losses"].append(loss.item())

    # generate.py, with argmax in place of torch.multinomial (its draws cannot be matched)
    model.eval()
    hidden = model.init_hidden(1)
    input = torch.tensor([[3]], dtype=torch.long)
    with torch.no_grad():
        for i in range(3):
            output, hidden = model(input, hidden)
            word_weights = output.squeeze().div(0.8).exp().cpu()
            word_idx = torch.argmax(word_weights)
            input.fill_(word_idx)
            out["generated"].append(word_idx.item())
            assert torch.multinomial(word_weights, 1).shape == (1,)
    out["n_params"] = len(list(model.parameters()))
    # softmax ignores a shift of each query's scores, so the key projection's bias
    # (linears[1]) gets a gradient of rounding noise only, which Adam (eps=1e-9) scales up
    out["model"] = {k: v for k, v in _params(model).items()
                    if not k.endswith("linears.1.bias")}
    return out


# --- 7. The Annotated Transformer (harvardnlp), its model, masks, loss and decoding ------

def run_annotated_transformer(torch):
    nn = torch.nn
    F = torch.nn.functional
    log_softmax = F.log_softmax

    def clones(module, N):
        return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])

    class LayerNorm(nn.Module):
        def __init__(self, features, eps=1e-6):
            super(LayerNorm, self).__init__()
            self.a_2 = nn.Parameter(torch.ones(features))
            self.b_2 = nn.Parameter(torch.zeros(features))
            self.eps = eps
        def forward(self, x):
            mean = x.mean(-1, keepdim=True)
            std = x.std(-1, keepdim=True)
            return self.a_2 * (x - mean) / (std + self.eps) + self.b_2

    class SublayerConnection(nn.Module):
        def __init__(self, size, dropout):
            super(SublayerConnection, self).__init__()
            self.norm = LayerNorm(size)
            self.dropout = nn.Dropout(dropout)
        def forward(self, x, sublayer):
            return x + self.dropout(sublayer(self.norm(x)))

    def subsequent_mask(size):
        attn_shape = (1, size, size)
        subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
        return subsequent_mask == 0

    def attention(query, key, value, mask=None, dropout=None):
        d_k = query.size(-1)
        scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
        if dropout is not None:
            p_attn = dropout(p_attn)
        return torch.matmul(p_attn, value), p_attn

    class MultiHeadedAttention(nn.Module):
        def __init__(self, h, d_model, dropout=0.1):
            super(MultiHeadedAttention, self).__init__()
            assert d_model % h == 0
            self.d_k = d_model // h
            self.h = h
            self.linears = clones(nn.Linear(d_model, d_model), 4)
            self.attn = None
            self.dropout = nn.Dropout(p=dropout)
        def forward(self, query, key, value, mask=None):
            if mask is not None:
                mask = mask.unsqueeze(1)
            nbatches = query.size(0)
            query, key, value = [
                lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
                for lin, x in zip(self.linears, (query, key, value))
            ]
            x, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
            x = (x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k))
            del query
            del key
            del value
            return self.linears[-1](x)

    class PositionwiseFeedForward(nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.1):
            super(PositionwiseFeedForward, self).__init__()
            self.w_1 = nn.Linear(d_model, d_ff)
            self.w_2 = nn.Linear(d_ff, d_model)
            self.dropout = nn.Dropout(dropout)
        def forward(self, x):
            return self.w_2(self.dropout(self.w_1(x).relu()))

    class Embeddings(nn.Module):
        def __init__(self, d_model, vocab):
            super(Embeddings, self).__init__()
            self.lut = nn.Embedding(vocab, d_model)
            self.d_model = d_model
        def forward(self, x):
            return self.lut(x) * math.sqrt(self.d_model)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout, max_len=5000):
            super(PositionalEncoding, self).__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * -(math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            pe = pe.unsqueeze(0)
            self.register_buffer("pe", pe)
        def forward(self, x):
            x = x + self.pe[:, : x.size(1)].requires_grad_(False)
            return self.dropout(x)

    class EncoderLayer(nn.Module):
        def __init__(self, size, self_attn, feed_forward, dropout):
            super(EncoderLayer, self).__init__()
            self.self_attn = self_attn
            self.feed_forward = feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 2)
            self.size = size
        def forward(self, x, mask):
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
            return self.sublayer[1](x, self.feed_forward)

    class DecoderLayer(nn.Module):
        def __init__(self, size, self_attn, src_attn, feed_forward, dropout):
            super(DecoderLayer, self).__init__()
            self.size = size
            self.self_attn = self_attn
            self.src_attn = src_attn
            self.feed_forward = feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 3)
        def forward(self, x, memory, src_mask, tgt_mask):
            m = memory
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask))
            x = self.sublayer[1](x, lambda x: self.src_attn(x, m, m, src_mask))
            return self.sublayer[2](x, self.feed_forward)

    class Encoder(nn.Module):
        def __init__(self, layer, N):
            super(Encoder, self).__init__()
            self.layers = clones(layer, N)
            self.norm = LayerNorm(layer.size)
        def forward(self, x, mask):
            for layer in self.layers:
                x = layer(x, mask)
            return self.norm(x)

    class Decoder(nn.Module):
        def __init__(self, layer, N):
            super(Decoder, self).__init__()
            self.layers = clones(layer, N)
            self.norm = LayerNorm(layer.size)
        def forward(self, x, memory, src_mask, tgt_mask):
            for layer in self.layers:
                x = layer(x, memory, src_mask, tgt_mask)
            return self.norm(x)

    class Generator(nn.Module):
        def __init__(self, d_model, vocab):
            super(Generator, self).__init__()
            self.proj = nn.Linear(d_model, vocab)
        def forward(self, x):
            return log_softmax(self.proj(x), dim=-1)

    class EncoderDecoder(nn.Module):
        def __init__(self, encoder, decoder, src_embed, tgt_embed, generator):
            super(EncoderDecoder, self).__init__()
            self.encoder = encoder
            self.decoder = decoder
            self.src_embed = src_embed
            self.tgt_embed = tgt_embed
            self.generator = generator
        def forward(self, src, tgt, src_mask, tgt_mask):
            return self.decode(self.encode(src, src_mask), src_mask, tgt, tgt_mask)
        def encode(self, src, src_mask):
            return self.encoder(self.src_embed(src), src_mask)
        def decode(self, memory, src_mask, tgt, tgt_mask):
            return self.decoder(self.tgt_embed(tgt), memory, src_mask, tgt_mask)

    def make_model(src_vocab, tgt_vocab, N=6, d_model=512, d_ff=2048, h=8, dropout=0.1):
        c = copy.deepcopy
        attn = MultiHeadedAttention(h, d_model)
        ff = PositionwiseFeedForward(d_model, d_ff, dropout)
        position = PositionalEncoding(d_model, dropout)
        model = EncoderDecoder(
            Encoder(EncoderLayer(d_model, c(attn), c(ff), dropout), N),
            Decoder(DecoderLayer(d_model, c(attn), c(attn), c(ff), dropout), N),
            nn.Sequential(Embeddings(d_model, src_vocab), c(position)),
            nn.Sequential(Embeddings(d_model, tgt_vocab), c(position)),
            Generator(d_model, tgt_vocab),
        )
        for p in model.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)
        return model

    class Batch:
        def __init__(self, src, tgt=None, pad=2):
            self.src = src
            self.src_mask = (src != pad).unsqueeze(-2)
            if tgt is not None:
                self.tgt = tgt[:, :-1]
                self.tgt_y = tgt[:, 1:]
                self.tgt_mask = self.make_std_mask(self.tgt, pad)
                self.ntokens = (self.tgt_y != pad).data.sum()
        @staticmethod
        def make_std_mask(tgt, pad):
            tgt_mask = (tgt != pad).unsqueeze(-2)
            tgt_mask = tgt_mask & subsequent_mask(tgt.size(-1)).type_as(tgt_mask.data)
            return tgt_mask

    class LabelSmoothing(nn.Module):
        def __init__(self, size, padding_idx, smoothing=0.0):
            super(LabelSmoothing, self).__init__()
            self.criterion = nn.KLDivLoss(reduction="sum")
            self.padding_idx = padding_idx
            self.confidence = 1.0 - smoothing
            self.smoothing = smoothing
            self.size = size
            self.true_dist = None
        def forward(self, x, target):
            assert x.size(1) == self.size
            true_dist = x.data.clone()
            true_dist.fill_(self.smoothing / (self.size - 2))
            true_dist.scatter_(1, target.data.unsqueeze(1), self.confidence)
            true_dist[:, self.padding_idx] = 0
            mask = torch.nonzero(target.data == self.padding_idx)
            if mask.dim() > 0:
                true_dist.index_fill_(0, mask.squeeze(), 0.0)
            self.true_dist = true_dist
            return self.criterion(x, true_dist.clone().detach())

    class SimpleLossCompute:
        def __init__(self, generator, criterion):
            self.generator = generator
            self.criterion = criterion
        def __call__(self, x, y, norm):
            x = self.generator(x)
            sloss = (self.criterion(x.contiguous().view(-1, x.size(-1)),
                                    y.contiguous().view(-1)) / norm)
            return sloss.data * norm, sloss

    def rate(step, model_size, factor, warmup):
        if step == 0:
            step = 1
        return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))

    V = 11
    criterion = LabelSmoothing(size=V, padding_idx=0, smoothing=0.1)
    model = make_model(V, V, N=2, d_model=8, d_ff=16, h=2)
    init_params(torch, model, seed=5)
    model.eval()  # dropout 0.1 everywhere
    optimizer = torch.optim.Adam(model.parameters(), lr=0.5, betas=(0.9, 0.98), eps=1e-9)
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer=optimizer, lr_lambda=lambda step: rate(step, 8, factor=1.0, warmup=4))
    out = {"loss": [], "lr": []}
    for i in range(3):
        d = data(torch, 20 + i, 2, 6, kind="int", high=V - 1) + 1
        d[:, 0] = 1
        d[1, 4:] = 0
        src = d.requires_grad_(False).clone().detach()
        tgt = d.requires_grad_(False).clone().detach()
        batch = Batch(src, tgt, 0)
        out_ = model.forward(batch.src, batch.tgt, batch.src_mask, batch.tgt_mask)
        loss, loss_node = SimpleLossCompute(model.generator, criterion)(
            out_, batch.tgt_y, batch.ntokens)
        loss_node.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        lr_scheduler.step()
        out["loss"].append(loss.item())
        out["lr"].append(optimizer.param_groups[0]["lr"])

    def greedy_decode(model, src, src_mask, max_len, start_symbol):
        memory = model.encode(src, src_mask)
        ys = torch.zeros(1, 1).fill_(start_symbol).type_as(src.data)
        for i in range(max_len - 1):
            out = model.decode(memory, src_mask, ys,
                               subsequent_mask(ys.size(1)).type_as(src.data))
            prob = model.generator(out[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.data[0]
            ys = torch.cat([ys, torch.zeros(1, 1).type_as(src.data).fill_(next_word)], dim=1)
        return ys
    src = torch.LongTensor([[0, 1, 2, 3, 4, 5]])
    src_mask = torch.ones(1, 1, 6)
    out["decode"] = greedy_decode(model, src, src_mask, max_len=6, start_symbol=0)
    out["true_dist"] = criterion.true_dist
    out["attn"] = model.encoder.layers[0].self_attn.attn
    # softmax ignores a shift of each query's scores, so the key projection's bias
    # (linears[1]) gets a gradient of rounding noise only, which Adam (eps=1e-9) scales up
    out["model"] = {k: v for k, v in _params(model).items()
                    if not k.endswith("linears.1.bias")}
    return out
