throw new Error('no native cbor-extract in the Portcullis test oracle');
