"""The PyTorch tutorials' sequence models, as the tutorials write them, at toy sizes:
char-RNN name classification, seq2seq with Bahdanau attention, a TransformerEncoder
language model and nn.Transformer translation with greedy decoding. Each ``run_*(torch)``
reaches every name through the module it is given; test_script_sequence.py compares the
framework's run with PyTorch's.
"""
import math
import string

import numpy as np

from script_harness import data, init_params


def _params(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


# --- 1. char-RNN name classification (NLP from scratch: classifying names) ---------------

ALL_LETTERS = string.ascii_letters + " .,;'"
N_LETTERS = len(ALL_LETTERS)
NAMES = [("Abe", 0), ("Kato", 1), ("Ng", 2), ("Sato", 1), ("Ada", 0), ("Li", 2)]
CATEGORIES = ["English", "Japanese", "Chinese"]


def run_char_rnn(torch, device="cpu"):
    nn = torch.nn

    def letterToIndex(letter):
        return ALL_LETTERS.find(letter)

    def lineToTensor(line):
        tensor = torch.zeros(len(line), 1, N_LETTERS)
        for li, letter in enumerate(line):
            tensor[li][0][letterToIndex(letter)] = 1
        return tensor.to(device)  # a no-op under set_default_device

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(RNN, self).__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, input, hidden):
            combined = torch.cat((input, hidden), 1)
            hidden = torch.tanh(self.i2h(combined))
            output = self.softmax(self.h2o(hidden))
            return output, hidden

        def initHidden(self):
            return torch.zeros(1, self.hidden_size, device=device)

    class CharRNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(CharRNN, self).__init__()
            self.rnn = nn.RNN(input_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, line_tensor):
            rnn_out, hidden = self.rnn(line_tensor)
            output = self.h2o(hidden[0])
            output = self.softmax(output)
            return output

    def categoryFromOutput(output):
        top_n, top_i = output.topk(1)
        category_i = top_i[0].item()
        return CATEGORIES[category_i], category_i

    n_hidden = 8
    rnn = init_params(torch, RNN(N_LETTERS, n_hidden, len(CATEGORIES)), seed=1).to(device)
    criterion = nn.NLLLoss()
    learning_rate = 0.05
    out = {"losses": [], "guesses": []}
    for name, cat in NAMES[:3]:
        category_tensor = torch.tensor([cat], dtype=torch.long, device=device)
        line_tensor = lineToTensor(name)
        hidden = rnn.initHidden()
        rnn.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        out["losses"].append(loss.item())
        out["guesses"].append(categoryFromOutput(output)[1])
    out["rnn"] = _params(rnn)

    # the 2024 tutorial: torch.set_default_device, a Dataset of names, batched SGD
    if device != "cpu":
        torch.set_default_device(device)
    try:
        out.update(_train_char_rnn(torch, device, CharRNN, lineToTensor, categoryFromOutput,
                                   n_hidden))
    finally:
        if device != "cpu":
            torch.set_default_device(None)
    return out


def _train_char_rnn(torch, device, CharRNN, lineToTensor, label_from_output, n_hidden):
    Dataset = torch.utils.data.Dataset

    class NamesDataset(Dataset):
        def __init__(self, names):
            self.data, self.data_tensors, self.labels, self.labels_tensors = [], [], [], []
            for name, label in names:
                self.data.append(name)
                self.data_tensors.append(lineToTensor(name))
                self.labels.append(CATEGORIES[label])
            self.labels_uniq = CATEGORIES
            for idx in range(len(self.labels)):
                temp_tensor = torch.tensor([self.labels_uniq.index(self.labels[idx])],
                                           dtype=torch.long)
                self.labels_tensors.append(temp_tensor)

        def __len__(self):
            return len(self.data)

        def __getitem__(self, idx):
            data_item = self.data[idx]
            data_label = self.labels[idx]
            data_tensor = self.data_tensors[idx]
            label_tensor = self.labels_tensors[idx]
            return label_tensor, data_tensor, data_label, data_item

    alldata = NamesDataset(NAMES)
    train_set, test_set = torch.utils.data.random_split(
        alldata, [.5, .5], generator=torch.Generator(device=device).manual_seed(2024))
    out = {"split": (len(train_set), len(test_set))}  # which names: not comparable

    def train(rnn, training_data, n_epoch=2, n_batch_size=3, learning_rate=0.2,
              criterion=torch.nn.NLLLoss()):
        current_loss = 0
        all_losses = []
        rnn.train()
        optimizer = torch.optim.SGD(rnn.parameters(), lr=learning_rate)
        np.random.seed(2024)  # the tutorial shuffles with NumPy's global generator
        for iter in range(1, n_epoch + 1):
            rnn.zero_grad()
            batches = list(range(len(training_data)))
            np.random.shuffle(batches)
            batches = np.array_split(batches, len(batches) // n_batch_size)
            for idx, batch in enumerate(batches):
                batch_loss = 0
                for i in batch:
                    (label_tensor, text_tensor, label, text) = training_data[i]
                    output = rnn.forward(text_tensor)
                    loss = criterion(output, label_tensor)
                    batch_loss += loss
                batch_loss.backward()
                torch.nn.utils.clip_grad_norm_(rnn.parameters(), 3)
                optimizer.step()
                optimizer.zero_grad()
                current_loss += batch_loss.item() / len(batch)
            all_losses.append(current_loss / len(batches))
            current_loss = 0
        return all_losses

    rnn = init_params(torch, CharRNN(N_LETTERS, n_hidden, len(CATEGORIES)), seed=2)
    out["all_losses"] = train(rnn, alldata)

    confusion = torch.zeros(len(CATEGORIES), len(CATEGORIES))
    rnn.eval()
    with torch.no_grad():
        for i in range(len(alldata)):
            (label_tensor, text_tensor, label, text) = alldata[i]
            output = rnn(text_tensor)
            guess, guess_i = label_from_output(output)
            label_i = CATEGORIES.index(label)
            confusion[label_i][guess_i] += 1
    for i in range(len(CATEGORIES)):
        denom = confusion[i].sum()
        if denom > 0:
            confusion[i] = confusion[i] / denom
    out["confusion"] = confusion
    out["eval"] = output
    out["charrnn"] = _params(rnn)
    return out


# --- 2. seq2seq translation with Bahdanau attention (NLP from scratch: seq2seq) ----------

SOS_token, EOS_token = 0, 1


def run_seq2seq_attention(torch):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super(EncoderRNN, self).__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input):
            embedded = self.dropout(self.embedding(input))
            output, hidden = self.gru(embedded)
            return output, hidden

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super(BahdanauAttention, self).__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            context = torch.bmm(weights, keys)
            return context, weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, max_length, dropout_p=0.1):
            super(AttnDecoderRNN, self).__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)
            self.max_length = max_length

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
            decoder_hidden = encoder_hidden
            decoder_outputs = []
            attentions = []
            for i in range(self.max_length):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(
                    decoder_input, decoder_hidden, encoder_outputs)
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)  # teacher forcing
                else:
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            decoder_outputs = torch.cat(decoder_outputs, dim=1)
            decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
            attentions = torch.cat(attentions, dim=1)
            return decoder_outputs, decoder_hidden, attentions

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input))
            query = hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            input_gru = torch.cat((embedded, context), dim=2)
            output, hidden = self.gru(input_gru, hidden)
            output = self.out(output)
            return output, hidden, attn_weights

    in_vocab, out_vocab, hidden, max_len, batch = 9, 7, 8, 5, 3
    encoder = init_params(torch, EncoderRNN(in_vocab, hidden, dropout_p=0.0), seed=3)
    decoder = init_params(torch, AttnDecoderRNN(hidden, out_vocab, max_len), seed=4)
    decoder.eval()  # its dropout stays p=0.1: eval() switches it off
    input_tensor = data(torch, 5, batch, max_len, kind="int", high=in_vocab)
    target_tensor = data(torch, 6, batch, max_len, kind="int", high=out_vocab)
    target_tensor[:, -1] = EOS_token

    encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    out = {"losses": []}
    for epoch in range(3):
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
        loss = criterion(
            decoder_outputs.view(-1, decoder_outputs.size(-1)),
            target_tensor.view(-1)
        )
        loss.backward()
        encoder_optimizer.step()
        decoder_optimizer.step()
        out["losses"].append(loss.item())

    encoder.eval()
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(input_tensor[:1])
        decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()
        decoded_words = []
        for idx in decoded_ids:
            if idx.item() == EOS_token:
                decoded_words.append("<EOS>")
                break
            decoded_words.append(idx.item())
    out["greedy"] = decoded_ids
    out["n_words"] = len(decoded_words)
    out["attn"] = decoder_attn
    out["encoder"] = _params(encoder)
    out["decoder"] = _params(decoder)
    # softmax ignores a shift of the scores, so Va.bias gets a gradient of rounding noise
    # only, which Adam scales up to full steps of either sign
    del out["decoder"]["attention.Va.bias"]
    return out

# --- 3. language modelling with nn.TransformerEncoder (transformer_tutorial) -------------

def run_transformer_lm(torch, batch_first=False):
    nn = torch.nn
    Tensor = torch.Tensor

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = torch.sin(position * div_term)
            pe[:, 0, 1::2] = torch.cos(position * div_term)
            self.register_buffer('pe', pe)

        def forward(self, x):
            if batch_first:
                x = x + self.pe[:x.size(1)].transpose(0, 1)
            else:
                x = x + self.pe[:x.size(0)]
            return self.dropout(x)

    class TransformerModel(nn.Module):
        def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5):
            super().__init__()
            self.model_type = 'Transformer'
            self.pos_encoder = PositionalEncoding(d_model, dropout)
            encoder_layers = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout,
                                                        batch_first=batch_first)
            self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers)
            self.embedding = nn.Embedding(ntoken, d_model)
            self.d_model = d_model
            self.linear = nn.Linear(d_model, ntoken)

        def forward(self, src: Tensor, src_mask: Tensor = None) -> Tensor:
            src = self.embedding(src) * math.sqrt(self.d_model)
            src = self.pos_encoder(src)
            if src_mask is None:
                sz = src.size(1) if batch_first else len(src)
                src_mask = nn.Transformer.generate_square_subsequent_mask(sz)
            output = self.transformer_encoder(src, src_mask, is_causal=True)
            output = self.linear(output)
            return output

    def batchify(data, bsz):
        seq_len = data.size(0) // bsz
        data = data[:seq_len * bsz]
        data = data.view(bsz, seq_len).t().contiguous()
        return data

    bptt = 4

    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i+seq_len]
        target = source[i+1:i+1+seq_len].reshape(-1)
        return data, target

    ntokens, emsize, d_hid, nlayers, nhead = 11, 8, 16, 2, 2
    model = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, dropout=0.0)
    init_params(torch, model, seed=7)
    train_data = batchify(data(torch, 8, 38, kind="int", high=ntokens), 3)  # [12, 3]
    val_data = batchify(data(torch, 9, 14, kind="int", high=ntokens), 2)     # [7, 2]

    criterion = nn.CrossEntropyLoss()
    lr = 5.0
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
    out = {"losses": [], "val": [], "lr": []}

    def evaluate(model, eval_data):
        model.eval()
        total_loss = 0.
        with torch.no_grad():
            for i in range(0, eval_data.size(0) - 1, bptt):
                data, targets = get_batch(eval_data, i)
                if batch_first:
                    data = data.t()
                    targets = targets.view(-1, data.size(0)).t().reshape(-1)
                seq_len = data.size(1) if batch_first else data.size(0)
                output = model(data)
                output_flat = output.view(-1, ntokens)
                total_loss += seq_len * criterion(output_flat, targets).item()
        return total_loss / (len(eval_data) - 1)

    for epoch in range(2):
        model.train()
        for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
            data_, targets = get_batch(train_data, i)
            if batch_first:
                data_ = data_.t()
                targets = targets.view(-1, data_.size(0)).t().reshape(-1)
            output = model(data_)
            output_flat = output.view(-1, ntokens)
            loss = criterion(output_flat, targets)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()
            out["losses"].append(loss.item())
        val_loss = evaluate(model, val_data)
        out["val"].append(math.exp(val_loss))
        scheduler.step()
        out["lr"].append(scheduler.get_last_lr()[0])
    out["model"] = _params(model)
    return out

# --- 4. nn.Transformer translation (translation_transformer tutorial) --------------------

UNK_IDX, PAD_IDX, BOS_IDX, EOS_IDX = 0, 1, 2, 3


def run_transformer_translation(torch):
    nn = torch.nn
    Tensor = torch.Tensor
    DEVICE = "cpu"

    class PositionalEncoding(nn.Module):
        def __init__(self, emb_size: int, dropout: float, maxlen: int = 50):
            super(PositionalEncoding, self).__init__()
            den = torch.exp(- torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
            pos = torch.arange(0, maxlen).reshape(maxlen, 1)
            pos_embedding = torch.zeros((maxlen, emb_size))
            pos_embedding[:, 0::2] = torch.sin(pos * den)
            pos_embedding[:, 1::2] = torch.cos(pos * den)
            pos_embedding = pos_embedding.unsqueeze(-2)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer('pos_embedding', pos_embedding)

        def forward(self, token_embedding: Tensor):
            return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])

    class TokenEmbedding(nn.Module):
        def __init__(self, vocab_size: int, emb_size):
            super(TokenEmbedding, self).__init__()
            self.embedding = nn.Embedding(vocab_size, emb_size, padding_idx=PAD_IDX)
            self.emb_size = emb_size

        def forward(self, tokens: Tensor):
            return self.embedding(tokens.long()) * math.sqrt(self.emb_size)

    class Seq2SeqTransformer(nn.Module):
        def __init__(self, num_encoder_layers, num_decoder_layers, emb_size, nhead,
                     src_vocab_size, tgt_vocab_size, dim_feedforward=512, dropout=0.1):
            super(Seq2SeqTransformer, self).__init__()
            self.transformer = nn.Transformer(d_model=emb_size, nhead=nhead,
                                              num_encoder_layers=num_encoder_layers,
                                              num_decoder_layers=num_decoder_layers,
                                              dim_feedforward=dim_feedforward,
                                              dropout=dropout)
            self.generator = nn.Linear(emb_size, tgt_vocab_size)
            self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
            self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
            self.positional_encoding = PositionalEncoding(emb_size, dropout=dropout)

        def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask,
                    tgt_padding_mask, memory_key_padding_mask):
            src_emb = self.positional_encoding(self.src_tok_emb(src))
            tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
            outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                                    src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
            return self.generator(outs)

        def encode(self, src: Tensor, src_mask: Tensor):
            return self.transformer.encoder(self.positional_encoding(
                self.src_tok_emb(src)), src_mask)

        def decode(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor):
            return self.transformer.decoder(self.positional_encoding(
                self.tgt_tok_emb(tgt)), memory, tgt_mask)

    def generate_square_subsequent_mask(sz):
        mask = (torch.triu(torch.ones((sz, sz), device=DEVICE)) == 1).transpose(0, 1)
        mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
        return mask

    def create_mask(src, tgt):
        src_seq_len = src.shape[0]
        tgt_seq_len = tgt.shape[0]
        tgt_mask = generate_square_subsequent_mask(tgt_seq_len)
        src_mask = torch.zeros((src_seq_len, src_seq_len), device=DEVICE).type(torch.bool)
        src_padding_mask = (src == PAD_IDX).transpose(0, 1)
        tgt_padding_mask = (tgt == PAD_IDX).transpose(0, 1)
        return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask

    def tensor_transform(token_ids):
        return torch.cat((torch.tensor([BOS_IDX]),
                          torch.tensor(token_ids),
                          torch.tensor([EOS_IDX])))

    def collate_fn(batch):
        src_batch, tgt_batch = [], []
        for src_sample, tgt_sample in batch:
            src_batch.append(tensor_transform(src_sample))
            tgt_batch.append(tensor_transform(tgt_sample))
        src_batch = nn.utils.rnn.pad_sequence(src_batch, padding_value=PAD_IDX)
        tgt_batch = nn.utils.rnn.pad_sequence(tgt_batch, padding_value=PAD_IDX)
        return src_batch, tgt_batch

    SRC_VOCAB, TGT_VOCAB = 10, 9
    rng = np.random.default_rng(10)
    pairs = [(rng.integers(4, SRC_VOCAB, size=n).tolist(),
              rng.integers(4, TGT_VOCAB, size=m).tolist())
             for n, m in [(3, 4), (5, 2), (2, 3), (4, 4)]]
    transformer = Seq2SeqTransformer(1, 1, 8, 2, SRC_VOCAB, TGT_VOCAB, dim_feedforward=16)
    init_params(torch, transformer, seed=11)
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX)
    optimizer = torch.optim.Adam(transformer.parameters(), lr=0.01, betas=(0.9, 0.98), eps=1e-9)
    train_dataloader = torch.utils.data.DataLoader(pairs, batch_size=2, collate_fn=collate_fn)

    out = {"losses": []}
    transformer.eval()  # dropout 0.1 in the model: compared runs switch it off
    for src, tgt in train_dataloader:
        tgt_input = tgt[:-1, :]
        src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
        logits = transformer(src, tgt_input, src_mask, tgt_mask, src_padding_mask,
                             tgt_padding_mask, src_padding_mask)
        optimizer.zero_grad()
        tgt_out = tgt[1:, :]
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        loss.backward()
        optimizer.step()
        out["losses"].append(loss.item())
    out["src_mask_is_bool"] = src_mask.dtype == torch.bool
    out["tgt_mask"] = tgt_mask

    def greedy_decode(model, src, src_mask, max_len, start_symbol):
        memory = model.encode(src, src_mask)
        ys = torch.ones(1, 1).fill_(start_symbol).type(torch.long)
        for i in range(max_len-1):
            tgt_mask = (generate_square_subsequent_mask(ys.size(0)).type(torch.bool))
            out_ = model.decode(ys, memory, tgt_mask)
            out_ = out_.transpose(0, 1)
            prob = model.generator(out_[:, -1])
            _, next_word = torch.max(prob, dim=1)
            next_word = next_word.item()
            ys = torch.cat([ys, torch.ones(1, 1).type_as(src.data).fill_(next_word)], dim=0)
            if next_word == EOS_IDX:
                break
        return ys

    with torch.no_grad():
        src = tensor_transform(pairs[0][0]).view(-1, 1)
        num_tokens = src.shape[0]
        src_mask = (torch.zeros(num_tokens, num_tokens)).type(torch.bool)
        out["decoded"] = greedy_decode(transformer, src, src_mask, num_tokens + 3,
                                       BOS_IDX).flatten()
    out["emb_pad_row"] = transformer.tgt_tok_emb.embedding.weight[PAD_IDX]
    out["model"] = _params(transformer)
    # softmax ignores a shift of each query's scores, so the key bias gets a gradient of
    # rounding noise only, which Adam (eps=1e-9) scales up to full steps of either sign
    for k, v in out["model"].items():
        if k.endswith("in_proj_bias"):
            out["model"][k] = torch.cat([v[:8], v[16:]])
    return out
